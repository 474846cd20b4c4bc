import type { Queryable } from '../db/database.ts';
import { captureFee, lateCaptureFee, releaseFee } from '../fees/ledger.ts';
import * as repo from './repo.ts';
import { nextStatus, type OrderStatus, type OrderTrigger } from './states.ts';
import { orderStatusRecord } from './views.ts';
import { emitEvent, orderEventFor } from '../webhooks/outbox.ts';

/** A move as applied (metrics): creation reports itself the same way, with `from` null. */
export type AppliedTransition = { from: OrderStatus | null; to: OrderStatus; trigger: OrderTrigger | 'create' };
const observers = new Set<(t: AppliedTransition) => void>();

/**
 * Subscribes to every move this process applies (the composition root feeds the metrics with it);
 * returns the unsubscribe function. Observers run inside the caller's transaction once the move's
 * statements succeeded, so a transaction that fails to commit afterwards was still counted. The set
 * is process-wide (transitionOrder gets no dependencies): two gateways in one process, as in some
 * tests, each see both one's moves.
 */
export function observeTransitions(fn: (t: AppliedTransition) => void): () => void {
  observers.add(fn);
  return () => void observers.delete(fn);
}

/**
 * What a module built on orders does after an order moved (checkout sessions follow their order,
 * quick-pay sends its completion): called with the moved row and the new status, inside the same
 * transaction, after the order's own statements and events. Orders never import those modules (they
 * sit above it); the composition root (main.ts) registers them with `followTransitions`.
 */
export type TransitionFollower = (tx: Queryable, order: repo.OrderRow, to: OrderStatus, now?: Date) => Promise<void>;
const followers: TransitionFollower[] = [];

/**
 * Registers followers, run in registration order after every transition. Process-wide like the
 * observers, and idempotent: registering the same function again changes nothing, so the composition
 * root can register at import time and any number of gateways in one process share one list.
 */
export function followTransitions(...fns: TransitionFollower[]): void {
  for (const fn of fns) if (!followers.includes(fn)) followers.push(fn);
}

/**
 * Invoicing an EXPIRED or CANCELLED order (an accepted late payment) needs its fee again, which was
 * released to the available balance when the order closed; thrown when that balance is short. The
 * caller's transaction rolls back, so nothing moved.
 */
export class FeeBalanceShortError extends Error {
  readonly orderId: string;
  constructor(orderId: string) {
    super(`fee balance cannot cover the late capture of order ${orderId}`);
    this.orderId = orderId;
  }
}

class IllegalTransitionError extends Error {
  constructor(from: OrderStatus, trigger: OrderTrigger) {
    super(`illegal order transition: ${trigger} from ${from}`);
  }
}

/**
 * The one way an order changes status. Inside the caller's transaction it:
 *  1. checks the move against the transition table (a programming error throws),
 *  2. applies it as a conditional UPDATE on the expected status (a lost race returns undefined),
 *  3. writes the audit row, and
 *  4. applies the fee consequence: capture on INVOICED, release on CANCELLED / EXPIRED / FAILED;
 *     an order invoiced from EXPIRED / CANCELLED (accepted late payment) had its reserve released,
 *     so its fee is captured from the available balance (`late_capture`).
 * Webhook events for the move are added here too (outbox, same transaction), then the registered
 * followers run (checkout session, quick-pay completion), in the same transaction.
 */
export async function transitionOrder(
  tx: Queryable,
  args: { orderId: string; from: OrderStatus; trigger: OrderTrigger; patch?: repo.OrderPatch; detail?: unknown /** the caller's clock (events' created_at) */; now?: Date },
): Promise<repo.OrderRow | undefined> {
  const to = nextStatus(args.from, args.trigger);
  if (!to) throw new IllegalTransitionError(args.from, args.trigger);
  const row = await repo.updateOrderStatus(tx, args.orderId, args.from, to, args.patch ?? {});
  if (!row) return undefined;
  await repo.insertTransition(tx, { orderId: row.id, from: args.from, to, trigger: args.trigger, detail: args.detail });
  const fee = BigInt(row.fee_amount);
  if (fee > 0n) {
    if (to === 'INVOICED' && (args.from === 'EXPIRED' || args.from === 'CANCELLED')) {
      if (!(await lateCaptureFee(tx, row.merchant_id, row.id, fee))) throw new FeeBalanceShortError(row.id);
    } else if (to === 'INVOICED') await mustMove(captureFee(tx, row.merchant_id, row.id, fee), 'capture', row.id);
    if (to === 'CANCELLED' || to === 'EXPIRED' || to === 'FAILED') await mustMove(releaseFee(tx, row.merchant_id, row.id, fee), 'release', row.id);
  }
  const event = orderEventFor(to);
  if (event) await emitEvent(tx, { merchantId: row.merchant_id, event, payload: orderStatusRecord(row), orderId: row.id, clockNow: args.now ?? new Date() });
  for (const follow of followers) await follow(tx, row, to, args.now);
  for (const observe of observers) observe({ from: args.from, to, trigger: args.trigger });
  return row;
}

async function mustMove(p: Promise<boolean>, what: string, orderId: string) {
  // The reserve made at creation guarantees the reserved balance; failing here means the books are
  // broken, so abort the whole transaction rather than move the order without its fee.
  if (!(await p)) throw new Error(`fee ${what} failed for order ${orderId}: reserved balance is short`);
}
