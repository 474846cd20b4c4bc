import type { Hex } from 'viem';
import type { Queryable } from '../../db/database.ts';
import { releaseOrderClaim } from '../../orders/claims.ts';
import * as orders from '../../orders/repo.ts';
import type { OrderStatus } from '../../orders/states.ts';
import { transitionOrder } from '../../orders/transition.ts';
import { mapLimit, type WatchContext } from './context.ts';
import type { BlockRef } from './rpc.ts';
import { unlinkOrphanedRefund } from './refunds.ts';
import { lockCursor, moveCursor, type Cursor } from './scan.ts';

/**
 * Reorg detection and recovery, by block hash only (never by timing or depth guesses).
 *
 * Detection: the block at the cursor's height no longer has the cursor's hash (every block below a
 * fork point keeps its hash and every block at or above it changes, so this one comparison catches
 * any reorg that touched scanned blocks), or, in the depth pass, a paying transfer's block hash
 * changed.
 *
 * Recovery, in one transaction with the cursor row locked:
 *  - the cursor goes back to `mismatch - finality - 1`: a fork can only start above the block that
 *    was `finality` deep when last seen, so that block is safe by the same assumption that makes
 *    invoicing at finality safe (one extra block of margin). It never goes back past a transfer
 *    that invoiced an order: INVOICED never regresses;
 *  - every non-orphaned transfer above that point whose block hash is no longer canonical gets
 *    `orphaned_at`;
 *  - an order paid by an orphaned transfer is un-seen: CHECKOUT_VERIFIED loses its payment fields;
 *    PAYMENT_CONFIRMED moves back to CHECKOUT_VERIFIED (trigger `orphan`) and loses them too. The
 *    order then waits again; if the same transaction is mined in another block, the rescan of the
 *    rewound window records it as a new transfer row and matches it again.
 */

/** The order columns that describe a seen payment, all cleared when the payment is orphaned. */
const PAYMENT_CLEARED: orders.OrderPatch = {
  transfer_id: null,
  tx_hash: null,
  log_index: null,
  block_number: null,
  block_hash: null,
  paid_amount_wei: null,
  confirmations: null,
  payment_seen_at: null,
  confirmed_at: null,
};

export type CursorCheck =
  | { kind: 'ok' }
  /** The node is behind the cursor (lagging replica or a shorter fork): wait, decide nothing. */
  | { kind: 'behind' }
  | { kind: 'reorg'; at: bigint };

/**
 * Compares the cursor with the chain. A head below the cursor is `behind`, not a reorg: a
 * load-balanced RPC often answers from a replica a block or two back, and treating that as a reorg
 * would orphan good transfers and regress confirmed orders. A real shorter fork is caught as soon
 * as the head passes the cursor height again, by hash.
 *
 * @example
 * const c = await checkCursor(ctx.rpc, cursor, head);
 * if (c.kind === 'reorg') await rewindAfterReorg(ctx, { mismatchAt: c.at, cursor });
 */
export async function checkCursor(rpc: WatchContext['rpc'], cursor: Cursor, head: BlockRef): Promise<CursorCheck> {
  if (head.number < cursor.blockNumber) return { kind: 'behind' };
  const block = head.number === cursor.blockNumber ? head : await rpc.getBlock(cursor.blockNumber);
  if (!block) return { kind: 'behind' };
  return block.hash === cursor.blockHash ? { kind: 'ok' } : { kind: 'reorg', at: cursor.blockNumber };
}

/**
 * The block a rewind returns the cursor to, before the INVOICED clamp.
 *
 * @example
 * rewindTarget(120n, 3); // 116n: blocks 117… are rescanned
 * rewindTarget(2n, 3);   // 0n
 */
export function rewindTarget(mismatchAt: bigint, finality: number): bigint {
  const t = mismatchAt - BigInt(finality) - 1n;
  return t > 0n ? t : 0n;
}

export type RewindOutcome = { kind: 'rewound'; cursor: Cursor; orphaned: number; unseen: string[] } | { kind: 'cursor-moved' } | { kind: 'behind' };

export interface RewindArgs {
  /** The lowest block known to have changed. */
  mismatchAt: bigint;
  /** The cursor the caller read; the rewind happens only if it is still the saved one. */
  cursor: Cursor;
  /**
   * 'chain-reset': the node serves a different chain (new genesis) under the same chain id. Every
   * block may differ, so the cursor goes to block 0 with no INVOICED clamp, and the new genesis
   * hash is saved in the same transaction.
   */
  reset?: { genesisHash: Hex };
}

/**
 * Rewinds the cursor below a detected hash mismatch and un-sees what the reorg removed (see the
 * module comment). RPC reads happen before the transaction; the transaction re-checks the cursor
 * so a concurrent watcher's scan and this rewind cannot interleave.
 *
 * @example
 * const r = await rewindAfterReorg(ctx, { mismatchAt: 120n, cursor });
 * // r = { kind: 'rewound', cursor: { blockNumber: 116n, … }, orphaned: 1, unseen: ['ord_…'] }
 */
export async function rewindAfterReorg(ctx: WatchContext, args: RewindArgs): Promise<RewindOutcome> {
  const { chain, db, rpc, log } = ctx;
  const mismatchAt = args.mismatchAt < args.cursor.blockNumber ? args.mismatchAt : args.cursor.blockNumber;
  let target = args.reset ? 0n : rewindTarget(mismatchAt, chain.finalityConfirmations);
  const invoicedAt = args.reset ? undefined : await highestInvoicedTransferBlock(db, chain.chainId, target);
  if (invoicedAt !== undefined) {
    if (invoicedAt >= mismatchAt) {
      // Beyond the model: a block that was `finality` deep was replaced. INVOICED orders stay as
      // they are (fulfilment may already have happened); the operator must look at them.
      log.error('reorg reaches an invoiced payment: deeper than finality_confirmations', { mismatch_at: mismatchAt, invoiced_block: invoicedAt });
      target = mismatchAt - 1n;
    } else {
      target = invoicedAt;
    }
  }
  const targetBlock = await rpc.getBlock(target);
  if (!targetBlock) return { kind: 'behind' };

  const { rows: window } = await db.query<{ id: number; block_number: number; block_hash: string }>(
    `SELECT id, block_number, block_hash FROM chain_transfers
      WHERE chain_id = $1 AND block_number > $2 AND orphaned_at IS NULL ORDER BY block_number, id`,
    [chain.chainId, Number(target)],
  );
  const numbers = [...new Set(window.map((t) => BigInt(t.block_number)))];
  const canonical = await mapLimit(numbers, 8, (n) => rpc.getBlock(n));
  const hashAt = new Map(numbers.map((n, i) => [n, canonical[i]?.hash]));
  // A block the node no longer has counts as gone: orphaning too much only costs a rescan, while
  // keeping a vanished payment could confirm it.
  const gone = window.filter((t) => hashAt.get(BigInt(t.block_number)) !== t.block_hash);

  const now = new Date(ctx.clock.now());
  return db.transaction(async (tx): Promise<RewindOutcome> => {
    if (!(await lockCursor(tx, chain.chainId, args.cursor))) return { kind: 'cursor-moved' };
    const unseen: string[] = [];
    const invoicedLeft: string[] = [];
    let orphaned = 0;
    for (const t of gone) {
      const { rows } = await tx.query<{ match_status: string; order_id: string | null; tx_hash: string; log_index: number; block_number: number; block_hash: string }>(
        `UPDATE chain_transfers SET orphaned_at = now() WHERE id = $1 AND orphaned_at IS NULL
         RETURNING match_status, order_id, tx_hash, log_index, block_number, block_hash`,
        [t.id],
      );
      const row = rows[0];
      if (!row) continue;
      orphaned++;
      // A DIRECT refund it paid back waits for its transfer again (refunds.ts).
      if (row.match_status === 'claimed') await unlinkOrphanedRefund(tx, t.id);
      // A late or under-payment only recorded against an order moves nothing (its row is orphaned
      // above, so the status record shows it gone and it cannot be accepted); one the merchant
      // accepted is the order's payment (transfer_id), handled like a match.
      if (!row.order_id) continue;
      const detail = { reason: args.reset ? 'chain-reset' : 'reorg', tx_hash: row.tx_hash, block_number: row.block_number, block_hash: row.block_hash, at: now.toISOString() };
      const r = await unseePayment(tx, row.order_id, t.id, detail);
      if (r === 'unseen') unseen.push(row.order_id);
      if (r === 'invoiced') invoicedLeft.push(row.order_id);
      // The transfer is off the chain: its claim goes with it (an INVOICED order keeps its payment,
      // and so its claim). Mined again, it is claimed again when the rescan attributes it.
      else await releaseOrderClaim(tx, { chainId: chain.chainId, txRef: row.tx_hash, index: row.log_index }, row.order_id);
    }
    await moveCursor(tx, chain.chainId, targetBlock);
    if (args.reset) await tx.query('UPDATE chain_cursors SET genesis_hash = $2 WHERE chain_id = $1', [chain.chainId, args.reset.genesisHash]);
    if (args.reset) {
      // A new genesis is not a reorg: the node now serves another chain under the same id (every
      // restart of the dev profile's anvil does this). Nothing was lost by a fork, so this is a
      // warning that says what happens to the old orders, not an error an operator must act on.
      log.warn(
        `new chain under chain id ${chain.chainId} (new genesis block, e.g. a restarted dev chain): scanning it from block 0; ` +
          'orders invoiced on the previous chain stay INVOICED, payments not yet invoiced are forgotten, open orders can be paid until they expire',
        {
          from_block: args.cursor.blockNumber,
          orphaned,
          unseen: unseen.length,
          invoiced_kept: invoicedLeft.length,
        },
      );
    } else {
      if (invoicedLeft.length > 0) {
        // INVOICED never regresses (fulfilment may have happened); an operator must look at these.
        log.error('reorg orphaned the payments of invoiced orders; they stay INVOICED', { count: invoicedLeft.length, first_order_id: invoicedLeft[0] });
      }
      log.warn('reorg: cursor rewound', { mismatch_at: mismatchAt, from_block: args.cursor.blockNumber, to_block: target, orphaned, unseen: unseen.length });
    }
    return { kind: 'rewound', cursor: { blockNumber: targetBlock.number, blockHash: targetBlock.hash as Hex }, orphaned, unseen };
  });
}

/**
 * Removes an orphaned transfer's payment from its order, if the order still names it: 'unseen' when
 * the order changed, 'invoiced' when it is INVOICED and left alone, 'unchanged' otherwise.
 */
async function unseePayment(tx: Queryable, orderId: string, transferId: number, detail: Record<string, unknown>): Promise<'unseen' | 'invoiced' | 'unchanged'> {
  const { rows } = await tx.query<{ status: OrderStatus; transfer_id: number | null }>('SELECT status, transfer_id FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
  const o = rows[0];
  if (!o || o.transfer_id !== transferId) return 'unchanged';
  switch (o.status) {
    case 'CHECKOUT_VERIFIED':
      return (await orders.patchOrder(tx, orderId, 'CHECKOUT_VERIFIED', PAYMENT_CLEARED)) ? 'unseen' : 'unchanged';
    case 'PAYMENT_CONFIRMED':
      return (await transitionOrder(tx, { orderId, from: 'PAYMENT_CONFIRMED', trigger: 'orphan', patch: PAYMENT_CLEARED, detail })) ? 'unseen' : 'unchanged';
    case 'INVOICED':
      return 'invoiced';
    case 'FAILED':
    case 'EXPIRED':
    case 'CANCELLED':
      return 'unchanged';
    default: {
      const never: never = o.status;
      throw new Error(`unknown order status ${never as string}`);
    }
  }
}

/** The highest block above `above` holding a transfer that invoiced an order on this chain (matched or accepted). */
async function highestInvoicedTransferBlock(q: Queryable, chainId: number, above: bigint): Promise<bigint | undefined> {
  const { rows } = await q.query<{ n: number | null }>(
    `SELECT max(t.block_number) AS n FROM chain_transfers t JOIN orders o ON o.id = t.order_id AND o.transfer_id = t.id
      WHERE t.chain_id = $1 AND t.block_number > $2 AND t.orphaned_at IS NULL AND o.status = 'INVOICED'`,
    [chainId, Number(above)],
  );
  const n = rows[0]?.n;
  return n === null || n === undefined ? undefined : BigInt(n);
}

export type GenesisCheck = { kind: 'same' } | { kind: 'reset'; rewind: RewindOutcome };

/**
 * Verifies that the node still serves the chain the cursor was built on, by genesis hash. A chain
 * id alone cannot tell: every anvil is 31337, and the dev profile restarts anvil (a brand-new chain)
 * under a kept PGlite directory. Without this the watcher would see a head far below its cursor and
 * wait for the new chain to grow past it, missing every payment in between. The first check saves
 * the hash; a different one rewinds to block 0 (`rewindAfterReorg` with `reset`), un-seeing what
 * the old chain paid and rescanning the new chain from its start.
 *
 * The watcher calls this on its first tick and whenever the cursor check is not `ok`, so a healthy
 * chain costs one extra RPC call per process start.
 *
 * @example
 * const g = await verifyGenesis(ctx, cursor);
 * if (g.kind === 'reset' && g.rewind.kind === 'rewound') cursor = g.rewind.cursor;
 */
export async function verifyGenesis(ctx: WatchContext, cursor: Cursor): Promise<GenesisCheck> {
  const genesis = await ctx.rpc.getBlock(0n);
  if (!genesis) return { kind: 'same' }; // a node that cannot serve block 0 cannot be checked this way
  const { rows } = await ctx.db.query<{ genesis_hash: string | null }>('SELECT genesis_hash FROM chain_cursors WHERE chain_id = $1', [ctx.chain.chainId]);
  const saved = rows[0]?.genesis_hash;
  if (saved === genesis.hash) return { kind: 'same' };
  if (saved === null || saved === undefined) {
    await ctx.db.query('UPDATE chain_cursors SET genesis_hash = $2 WHERE chain_id = $1 AND genesis_hash IS NULL', [ctx.chain.chainId, genesis.hash]);
    return { kind: 'same' };
  }
  return { kind: 'reset', rewind: await rewindAfterReorg(ctx, { mismatchAt: 1n, cursor, reset: { genesisHash: genesis.hash } }) };
}
