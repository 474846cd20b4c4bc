import type { Hex } from 'viem';
import type { MinedTx } from './chain.ts';

/**
 * A transaction as the chain watcher already indexed it (chain_transfers), read in the same
 * statement as the challenge (repo.getChallengesWithIndexed) instead of three JSON-RPC calls: the
 * Transfer logs of the configured tokens to watched addresses (every merchant wallet, so every
 * route recipient), their block, and the watcher's cursor as the head.
 *
 * Why this is as safe as asking the node, for the one thing verify uses it for (proving that a
 * matching transfer is final):
 * - the watcher records a block's logs for an address all at once (one eth_getLogs over the range,
 *   one address list per tick), so when any transfer of a transaction to the recipient is indexed,
 *   all of them are (the claim loop sees the same candidates as with a receipt);
 * - a row exists only for a successful transaction (a reverted one emits no log);
 * - rows of a block that left the canonical chain are orphaned by the watcher's rewind
 *   (`orphaned_at`), and are ignored here; two live rows of one transaction in different blocks
 *   (a rewind in progress) make the index undecided;
 * - the cursor is the last block the watcher scanned and checked against the node's hash chain, so
 *   it is never above the node's head: depth counted from it is never more than the node's. Past
 *   `finality_confirmations` a reorg is out of the model for both paths.
 *
 * Anything else (not indexed yet, not final by the cursor, no matching transfer) is undecided: the
 * caller asks the node, which also gives the precise refusal.
 */
/** One indexed transfer as the challenge read returns it (repo.getChallengesWithIndexed). */
export interface IndexedRow {
  token: string;
  log_index: number;
  block_number: string;
  block_hash: string;
  ts: string | null;
  from: string;
  to: string;
  amount: string;
}

/**
 * SQL of the columns `idx_cursor` and `idx_transfers` for a challenge row `c` and a transaction
 * hash parameter: read in the same statement as the challenge, so a first verify costs one read
 * and one write. Amounts and block numbers travel as text (JSON numbers would lose precision).
 *
 * Orphaned rows are left out by the aggregate's FILTER, not by the WHERE clause, on purpose: with
 * `orphaned_at IS NULL` in the WHERE, the partial index chain_transfers_block_idx (chain_id,
 * block_number, same predicate) matched too, and the generic plan of this prepared statement,
 * made while the table had no statistics, took it (seen with auto_explain in bench/mpp-verify.ts):
 * a walk over every live transfer of the chain per verify, 2–4 ms at 15,000 rows and growing with
 * the chain's history. Without that predicate only the indexes leading with (chain_id, tx_hash)
 * apply. A transaction has few rows, orphaned ones included.
 */
export function indexedColumnsSql(txParam: string): string {
  return `(SELECT k.block_number FROM chain_cursors k WHERE k.chain_id = c.chain_id) AS idx_cursor,
    (SELECT coalesce(json_agg(json_build_object('token', t.token_contract, 'log_index', t.log_index, 'block_number', t.block_number::text,
       'block_hash', t.block_hash, 'ts', extract(epoch FROM t.block_timestamp)::bigint::text, 'from', t.from_address, 'to', t.to_address,
       'amount', t.amount_wei::text)) FILTER (WHERE t.orphaned_at IS NULL), '[]'::json)
     FROM chain_transfers t WHERE t.chain_id = c.chain_id AND t.tx_hash = ${txParam}) AS idx_transfers`;
}

/** The indexed view of a transaction, or undefined when the index says nothing decisive about it. */
export function indexedTransfers(rows: IndexedRow[], cursor: number | string | null, txHash: Hex): MinedTx | undefined {
  const first = rows[0];
  if (!first || cursor === null || first.ts === null) return undefined;
  if (rows.some((r) => r.block_hash !== first.block_hash)) return undefined;
  return {
    status: 'success',
    blockNumber: BigInt(first.block_number),
    blockHash: first.block_hash as Hex,
    blockTimestamp: BigInt(first.ts),
    head: BigInt(cursor),
    transfers: rows.map((r) => ({
      token: r.token.toLowerCase() as Hex,
      from: r.from.toLowerCase() as Hex,
      to: r.to.toLowerCase() as Hex,
      value: BigInt(r.amount),
      txHash,
      logIndex: Number(r.log_index),
      blockNumber: BigInt(r.block_number),
      blockHash: r.block_hash as Hex,
    })),
  };
}
