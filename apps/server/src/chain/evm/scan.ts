import type { Hex } from 'viem';
import type { Queryable } from '../../db/database.ts';
import { mapLimit, yieldToEventLoop, type WatchContext } from './context.ts';
import { attributeTransfer, type AttributionOutcome } from './matching.ts';
import { linkRefundTransfer, pendingRefundPayees } from './refunds.ts';
import type { BlockRef, TransferLog } from './rpc.ts';

/**
 * The saved cursor and the forward scan (STYLE.md 11): the cursor is the last block fully scanned,
 * with its hash. A tick reads the head and scans `cursor+1 … head` in bounded ranges; each range's
 * transfers, their attribution to orders and the cursor move commit in ONE transaction, so a crash
 * at any point either keeps a whole range or none of it, and a restart resumes from the cursor with
 * nothing missed and nothing counted twice.
 */

export interface Cursor {
  blockNumber: bigint;
  blockHash: Hex;
}

/**
 * The saved cursor of a chain, if any.
 *
 * @example
 * const c = await readCursor(db, 31337); // { blockNumber: 120n, blockHash: '0xab…' } | undefined
 */
export async function readCursor(q: Queryable, chainId: number): Promise<Cursor | undefined> {
  const { rows } = await q.query<{ block_number: number; block_hash: string }>('SELECT block_number, block_hash FROM chain_cursors WHERE chain_id = $1', [chainId]);
  const r = rows[0];
  return r && { blockNumber: BigInt(r.block_number), blockHash: r.block_hash as Hex };
}

/**
 * Where a chain with no cursor (fresh database) starts: the cursor is placed so that the first
 * scanned block is `head - finality` (at least block 1; genesis holds no logs), or `startBlock`
 * when configured. Starting a finality-depth back rather than at genesis keeps a fresh install from
 * scanning years of history (Ethereum: ~21M blocks, ~10k eth_getLogs calls) while still catching a
 * payment for an order created just before the first tick; a database restored without its cursor
 * needs an explicit `startBlock`.
 *
 * @example
 * initialCursorBlock(1000n, 64);        // 935n: first scanned block is 936 = 1000 - 64
 * initialCursorBlock(1000n, 64, 500n);  // 499n
 * initialCursorBlock(10n, 64);          // 0n
 */
export function initialCursorBlock(head: bigint, finality: number, startBlock?: bigint): bigint {
  const first = startBlock ?? head - BigInt(finality);
  const cursor = first - 1n;
  if (cursor < 0n) return 0n;
  return cursor > head ? head : cursor;
}

/**
 * Returns the saved cursor, creating it (see `initialCursorBlock`) when absent. Two processes
 * creating it at once both end up with the first one's row (`ON CONFLICT DO NOTHING`, re-read).
 *
 * @example
 * const cursor = await ensureCursor(ctx, await ctx.rpc.getHead());
 */
export async function ensureCursor(ctx: WatchContext, head: BlockRef, startBlock?: bigint): Promise<Cursor> {
  const saved = await readCursor(ctx.db, ctx.chain.chainId);
  if (saved) return saved;
  const n = initialCursorBlock(head.number, ctx.chain.finalityConfirmations, startBlock);
  const block = n === head.number ? head : await ctx.rpc.getBlock(n);
  if (!block) throw new Error(`block ${n} is not available from the node`);
  const ins = await ctx.db.query(
    `INSERT INTO chain_cursors (chain_id, block_number, block_hash, block_timestamp) VALUES ($1, $2, $3, to_timestamp($4))
     ON CONFLICT (chain_id) DO NOTHING`,
    [ctx.chain.chainId, Number(block.number), block.hash, Number(block.timestamp)],
  );
  if (ins.rowCount === 1) ctx.log.info('chain cursor created', { first_block: block.number + 1n });
  return (await readCursor(ctx.db, ctx.chain.chainId))!;
}

/**
 * Locks the cursor row for the rest of the caller's transaction and tells whether it is still the
 * one the caller computed from. Every write that moves the cursor (a scanned range, a rewind) goes
 * through this, so two watchers that both believe they lead serialize here and the second one
 * backs off instead of scanning the same range on top of the first.
 */
export async function lockCursor(tx: Queryable, chainId: number, expected: Cursor): Promise<boolean> {
  const { rows } = await tx.query<{ block_number: number; block_hash: string }>('SELECT block_number, block_hash FROM chain_cursors WHERE chain_id = $1 FOR UPDATE', [chainId]);
  const r = rows[0];
  return !!r && BigInt(r.block_number) === expected.blockNumber && r.block_hash === expected.blockHash;
}

export async function moveCursor(tx: Queryable, chainId: number, block: BlockRef): Promise<void> {
  await tx.query('UPDATE chain_cursors SET block_number = $2, block_hash = $3, block_timestamp = to_timestamp($4), updated_at = now() WHERE chain_id = $1', [chainId, Number(block.number), block.hash, Number(block.timestamp)]);
}

/**
 * The receiving addresses the watcher filters logs by (topic2): every merchant wallet on the chain,
 * plus the payees of pending DIRECT refunds (chain/evm/refunds.ts),
 * plus the distinct pay-to addresses of live unpaid orders, so a merchant who replaced a wallet
 * still gets the payments of orders created with the old one. Both parts are bounded by merchants,
 * not orders: the second is a loose index scan over `orders_live_terms_key` (recursive CTE, one
 * index probe per distinct address) instead of reading every live order each tick (bench/detection.ts:
 * detection latency is the same with 0 and 100,000 live orders). Re-read every
 * tick, so a wallet added a moment ago is watched from the next tick.
 *
 * The caller must read it AFTER reading the head: a payment in a block up to that head was made
 * for an order that existed before it, whose wallet therefore already was in the table.
 *
 * @example
 * const to = await listWatchedAddresses(db, 31337); // ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8', …]
 */
export async function listWatchedAddresses(q: Queryable, chainId: number): Promise<Hex[]> {
  const live = `FROM orders WHERE chain_id = $1 AND status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL`;
  const { rows } = await q.query<{ address: string }>(
    `WITH RECURSIVE pay_to (a) AS (
       SELECT min(pay_to_address) ${live}
       UNION ALL
       SELECT (SELECT min(pay_to_address) ${live} AND pay_to_address > pay_to.a) FROM pay_to WHERE pay_to.a IS NOT NULL
     )
     SELECT address FROM merchant_wallets WHERE chain_id = $1
     UNION
     SELECT a FROM pay_to WHERE a IS NOT NULL
     UNION
     SELECT to_address FROM refunds WHERE rail = 'direct' AND status = 'pending' AND chain_id = $1 AND transfer_id IS NULL`,
    [chainId],
  );
  return rows.map((r) => r.address.toLowerCase() as Hex).sort();
}

/**
 * The next inclusive range to scan after `cursor`, at most `size` blocks, or undefined when the
 * cursor has reached the head.
 *
 * @example
 * nextRange(100n, 105n, 4); // { from: 101n, to: 104n }
 * nextRange(105n, 105n, 4); // undefined
 */
export function nextRange(cursor: bigint, head: bigint, size: number): { from: bigint; to: bigint } | undefined {
  if (cursor >= head) return undefined;
  const from = cursor + 1n;
  const to = from + BigInt(Math.max(1, size)) - 1n;
  return { from, to: to < head ? to : head };
}

export type RangeOutcome =
  | { kind: 'scanned'; cursor: Cursor; transfers: number; decisions: AttributionOutcome[] }
  /** Another watcher moved the cursor since we read it: stop this tick, the other one is ahead. */
  | { kind: 'cursor-moved' }
  /** The node's view changed under the scan (a block vanished or a log's block hash is no longer canonical): retry next tick. */
  | { kind: 'chain-moved'; detail: string };

/**
 * Scans one range: fetches the range end's hash (the new cursor) BEFORE the logs, the Transfer logs
 * of the configured tokens to `addresses`, and the headers of the blocks holding logs (their
 * timestamps decide lateness; their hashes must equal the logs'), then commits transfers, matches
 * and the cursor in one transaction.
 *
 * Why the end hash is read first: if a reorg lands between that read and `eth_getLogs`, the cursor
 * carries the old fork's hash, so the next tick's cursor check sees the mismatch and rewinds; read
 * afterwards, a new-fork cursor could sit on old-fork logs and hide them from reorg detection.
 *
 * A node refusing the range size throws a range error (`isRangeError`) before anything is written;
 * the watcher halves the range and calls again.
 *
 * @example
 * const r = await scanRange(ctx, cursor, { from: 101n, to: 200n }, head, addresses);
 * if (r.kind === 'scanned') cursor = r.cursor;
 */
export async function scanRange(ctx: WatchContext, cursor: Cursor, range: { from: bigint; to: bigint }, head: BlockRef, addresses: readonly Hex[]): Promise<RangeOutcome> {
  const { chain, rpc } = ctx;
  const end = range.to === head.number ? head : await rpc.getBlock(range.to);
  if (!end) return { kind: 'chain-moved', detail: `block ${range.to} not available` };
  const tokens = chain.tokens.map((t) => t.address.toLowerCase() as Hex);
  const logs = dedupe(await rpc.getTransferLogs({ tokens, to: addresses, fromBlock: range.from, toBlock: range.to }));
  logs.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));

  const numbers = [...new Set(logs.map((l) => l.blockNumber))];
  const headers = new Map<bigint, BlockRef | undefined>();
  const fetched = await mapLimit(numbers, 8, (n) => (n === end.number ? Promise.resolve(end) : rpc.getBlock(n)));
  numbers.forEach((n, i) => headers.set(n, fetched[i]));
  for (const log of logs) {
    const h = headers.get(log.blockNumber);
    if (!h || h.hash !== log.blockHash) return { kind: 'chain-moved', detail: `log block ${log.blockNumber} is not canonical any more` };
  }

  const now = new Date(ctx.clock.now());
  return ctx.db.transaction(async (tx): Promise<RangeOutcome> => {
    if (!(await lockCursor(tx, chain.chainId, cursor))) return { kind: 'cursor-moved' };
    const decisions: AttributionOutcome[] = [];
    let inserted = 0;
    // Read once, at the range's first new transfer (none: no query), inside the transaction like
    // the per-transfer lookup it spares.
    let refundPayees: ReadonlySet<string> | undefined;
    for (const [i, log] of logs.entries()) {
      const block = headers.get(log.blockNumber)!;
      const ins = await insertTransfer(tx, chain.chainId, log, block);
      if (ins !== undefined) {
        inserted++;
        const blockTime = new Date(Number(block.timestamp) * 1000);
        // A merchant's DIRECT refund is claimed for the refund first (refunds.ts): attribution then
        // records it as claimed, never as a payment. Only a transfer to a pending refund's payee can be one.
        refundPayees ??= await pendingRefundPayees(tx, chain.chainId);
        if (refundPayees.has(log.to.toLowerCase())) await linkRefundTransfer(tx, { ...log, id: ins.id, chainId: chain.chainId, blockTime });
        decisions.push(await attributeTransfer(tx, { ...log, id: ins.id, chainId: chain.chainId, blockTime, priorOrderId: ins.priorOrderId }, { head: head.number, now }));
      }
      if (i % 50 === 49) await yieldToEventLoop();
    }
    await moveCursor(tx, chain.chainId, end);
    return { kind: 'scanned', cursor: { blockNumber: end.number, blockHash: end.hash }, transfers: inserted, decisions };
  });
}

/**
 * Records a log; returns the new row's id, or undefined when the same log in the same block was
 * already recorded (a rescan after a rewind, or a second watcher). The one exception: a row that
 * was orphaned and whose block is canonical again (the chain switched back) is revived and
 * re-attributed, with the order it was recorded against before (`priorOrderId`): an INVOICED
 * order keeps an orphaned payment (INVOICED never regresses), and that payment must then be found
 * to be that order's again, not pay another one.
 */
async function insertTransfer(tx: Queryable, chainId: number, log: TransferLog, block: BlockRef): Promise<{ id: number; priorOrderId: string | null } | undefined> {
  const { rows } = await tx.query<{ id: number; prior_order_id: string | null }>(
    `INSERT INTO chain_transfers (chain_id, token_contract, tx_hash, log_index, block_number, block_hash, block_timestamp,
       from_address, to_address, amount_wei, match_status)
     VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7), $8, $9, $10, 'unmatched')
     ON CONFLICT ON CONSTRAINT chain_transfers_log_key DO UPDATE SET orphaned_at = NULL, match_status = 'unmatched'
       WHERE chain_transfers.orphaned_at IS NOT NULL
     RETURNING id, order_id AS prior_order_id`,
    [chainId, log.token, log.txHash, log.logIndex, Number(log.blockNumber), log.blockHash, Number(block.timestamp), log.from, log.to, log.value.toString()],
  );
  const r = rows[0];
  return r && { id: Number(r.id), priorOrderId: r.prior_order_id };
}

function dedupe(logs: TransferLog[]): TransferLog[] {
  const seen = new Set<string>();
  return logs.filter((l) => {
    const k = `${l.txHash}:${l.logIndex}:${l.blockHash}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * The chain time up to which every block has been scanned (the cursor block's timestamp), or
 * undefined before the first scan. The expiry sweeper should expire an order only when this is past
 * its `expires_at`: otherwise a watcher that is behind (RPC outage, catch-up after downtime) lets
 * the sweeper expire an order whose on-time payment simply has not been read yet.
 *
 * @example
 * const t = await scannedThrough(db, 31337);
 * const safe = t && t.getTime() >= order.expires_at.getTime();
 */
export async function scannedThrough(q: Queryable, chainId: number): Promise<Date | undefined> {
  const { rows } = await q.query<{ block_timestamp: Date | null }>('SELECT block_timestamp FROM chain_cursors WHERE chain_id = $1', [chainId]);
  return rows[0]?.block_timestamp ?? undefined;
}
