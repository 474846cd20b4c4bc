import type { Hex } from 'viem';
import * as orders from '../../orders/repo.ts';
import { depthOf, depthTrigger, type OrderStatus } from '../../orders/states.ts';
import { transitionOrder } from '../../orders/transition.ts';
import { mapLimit, yieldToEventLoop, type WatchContext } from './context.ts';
import { confirmRefunds } from './refunds.ts';
import type { BlockRef } from './rpc.ts';
import { isDelegateFlow } from '../../settlement/flows/index.ts';

/**
 * The depth pass: every tick, each order with a seen payment that is not yet INVOICED is checked
 * against the chain and moved by depth (viem `waitForTransactionReceipt` semantics: the block of
 * the log counts as one confirmation).
 *
 * Never a false confirmation: before any move the block at the transfer's height must still carry
 * the recorded hash. A changed hash moves nothing and is reported as `reorgAt` so the watcher
 * rewinds (reorg.ts) in the same tick.
 */

export interface DepthOutcome {
  confirmed: string[];
  invoiced: string[];
  /** Orders whose `confirmations` column advanced without a status change. */
  progressed: number;
  /** Lowest block whose recorded hash no longer matches the chain, if any. */
  reorgAt?: bigint;
}

interface PendingRow {
  id: string;
  flow: string;
  status: OrderStatus;
  transfer_id: number;
  tx_hash: string;
  block_number: number;
  block_hash: string;
  confirmations: number | null;
}

/** Upper bound of orders handled per pass; the rest wait for the next tick (oldest blocks first). */
const PASS_LIMIT = 1_000;

/**
 * Runs one depth pass at `head`.
 *
 * @example
 * const d = await runDepthPass(ctx, head);
 * if (d.reorgAt !== undefined) await rewindAfterReorg(ctx, { mismatchAt: d.reorgAt, cursor });
 */
export async function runDepthPass(ctx: WatchContext, head: BlockRef): Promise<DepthOutcome> {
  const { chain, db, rpc } = ctx;
  const out: DepthOutcome = { confirmed: [], invoiced: [], progressed: 0 };
  // DIRECT refund transfers at depth (refunds.ts): same canonical-hash rule as payments.
  const rf = await confirmRefunds(ctx, head);
  if (rf.reorgAt !== undefined) out.reorgAt = rf.reorgAt;
  const { rows } = await db.query<PendingRow>(
    `SELECT id, flow, status, transfer_id, tx_hash, block_number, block_hash, confirmations FROM orders
      WHERE chain_id = $1 AND transfer_id IS NOT NULL AND status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED')
      ORDER BY block_number, id LIMIT ${PASS_LIMIT}`,
    [chain.chainId],
  );
  if (rows.length === 0) return out;

  // One header per distinct block, read once per pass. Blocks above the head (a lagging replica)
  // are skipped: their depth is unknown, so nothing moves.
  const numbers = [...new Set(rows.map((r) => BigInt(r.block_number)))].filter((n) => n <= head.number);
  const blocks = await mapLimit(numbers, 8, (n) => (n === head.number ? Promise.resolve(head) : rpc.getBlock(n)));
  const hashAt = new Map<bigint, Hex | undefined>(numbers.map((n, i) => [n, blocks[i]?.hash]));

  const t = { confirmations: chain.confirmations, finality: chain.finalityConfirmations };
  for (const [i, o] of rows.entries()) {
    if (i % 50 === 49) await yieldToEventLoop();
    const bn = BigInt(o.block_number);
    const canonical = hashAt.get(bn);
    if (canonical === undefined) continue;
    if (canonical !== o.block_hash) {
      if (out.reorgAt === undefined || bn < out.reorgAt) out.reorgAt = bn;
      continue;
    }
    const depth = depthOf(bn, head.number);
    // A DELEGATE order is INVOICED by its settlement (settlement/worker.ts), never by its payment.
    const trigger = depthTrigger(o.status, depth, { ...t, invoices: !isDelegateFlow(o.flow) });
    if (!trigger && o.confirmations === depth) continue;

    const now = new Date(ctx.clock.now());
    const moved = await db.transaction(async (tx) => {
      // Re-read under lock: a rewind or another watcher may have un-seen or moved the order since
      // the SELECT above. Only the exact payment we verified may move it.
      const { rows: cur } = await tx.query<{ status: OrderStatus; transfer_id: number | null; block_hash: string | null }>('SELECT status, transfer_id, block_hash FROM orders WHERE id = $1 FOR UPDATE', [o.id]);
      const c = cur[0];
      if (!c || c.status !== o.status || c.transfer_id !== o.transfer_id || c.block_hash !== o.block_hash) return undefined;
      if (!trigger) {
        await orders.patchOrder(tx, o.id, o.status, { confirmations: depth });
        return 'progressed' as const;
      }
      const patch: orders.OrderPatch = { confirmations: depth };
      if (o.status === 'CHECKOUT_VERIFIED') patch.confirmed_at = now;
      if (trigger === 'invoice') patch.invoiced_at = now;
      const row = await transitionOrder(tx, {
        orderId: o.id,
        from: o.status,
        trigger,
        patch,
        now,
        detail: { tx_hash: o.tx_hash, block_number: o.block_number, block_hash: o.block_hash, confirmations: depth },
      });
      return row ? trigger : undefined;
    });
    if (moved === 'progressed') out.progressed++;
    else if (moved === 'confirm') out.confirmed.push(o.id);
    else if (moved === 'invoice') out.invoiced.push(o.id);
  }
  return out;
}
