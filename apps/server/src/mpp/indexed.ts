import type { Hex } from 'viem';
import type { Queryable } from '../db/database.ts';
import type { MinedTx } from './chain.ts';

/**
 * A transaction as the chain watcher already indexed it (chain_transfers), read with one query
 * instead of three JSON-RPC calls: the Transfer logs of the configured tokens to watched addresses
 * (every merchant wallet, so every route recipient), their block, and the watcher's cursor as
 * the head.
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
export async function indexedTransfers(q: Queryable, chainId: number, txHash: Hex): Promise<MinedTx | undefined> {
  const { rows } = await q.query<{
    token_contract: string;
    log_index: number;
    block_number: number;
    block_hash: string;
    ts: string | null;
    from_address: string;
    to_address: string;
    amount_wei: string;
    cursor: number | null;
  }>(
    `SELECT t.token_contract, t.log_index, t.block_number, t.block_hash, extract(epoch FROM t.block_timestamp)::bigint::text AS ts,
            t.from_address, t.to_address, t.amount_wei, c.block_number AS cursor
     FROM chain_transfers t LEFT JOIN chain_cursors c ON c.chain_id = t.chain_id
     WHERE t.chain_id = $1 AND t.tx_hash = $2 AND t.orphaned_at IS NULL`,
    [chainId, txHash],
    { name: 'mpp_indexed_transfers' },
  );
  const first = rows[0];
  if (!first || first.cursor === null || first.ts === null) return undefined;
  if (rows.some((r) => r.block_hash !== first.block_hash)) return undefined;
  return {
    status: 'success',
    blockNumber: BigInt(first.block_number),
    blockHash: first.block_hash as Hex,
    blockTimestamp: BigInt(first.ts),
    head: BigInt(first.cursor),
    transfers: rows.map((r) => ({
      token: r.token_contract.toLowerCase() as Hex,
      from: r.from_address.toLowerCase() as Hex,
      to: r.to_address.toLowerCase() as Hex,
      value: BigInt(r.amount_wei),
      txHash,
      logIndex: Number(r.log_index),
      blockNumber: BigInt(r.block_number),
      blockHash: r.block_hash as Hex,
    })),
  };
}
