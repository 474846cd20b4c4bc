import type { OrderStatus } from '../orders/states.ts';
import { SESSION_STATUSES, type SessionStatus } from '@tollgate/protocol';

/**
 * The checkout-session state machine: statuses, every valid move, and the pure decisions the
 * service, the order hook (`sync.ts`) and the sweeper take. No I/O here; `repo.transitionSession`
 * applies a move as a conditional UPDATE with its audit row.
 *
 * A session status is its own union type, never an order status (an order
 * status is never compared with COMPLETED, a session status never with PAYMENT_CONFIRMED). The
 * only bridge is {@link sessionTriggerForOrder}, an exhaustive switch over the order statuses.
 *
 * Moves (docs/hosted-checkout.md and docs/card-payments.md describe what the payer and the merchant see):
 *  - OPEN → BOUND when a payer binds and the DIRECT order is created (`bind`);
 *  - BOUND → BOUND when the bound order expired or was cancelled while the session is still open
 *    and a payer binds again: a new order replaces the dead one (`rebind`). The session does not
 *    go back to OPEN: BOUND means "an order has been linked", and the status projection shows the
 *    dead order's status until the next bind;
 *  - OPEN | BOUND → COMPLETED when the session's order reaches INVOICED, never on
 *    PAYMENT_CONFIRMED (`complete`);
 *  - OPEN | BOUND → FAILED when the session's order fails (`fail`);
 *  - OPEN | BOUND → EXPIRED by the sweeper past `expires_at` — for BOUND only while the order has
 *    no payment seen (`expire`, see {@link isExpiredAt});
 *  - EXPIRED → COMPLETED when the order the session was bound to is invoiced after all (`complete`):
 *    the watcher may record a payment made inside the order window only after the sweeper, which
 *    runs on wall-clock time, expired the session. The money arrived for this session's order, so
 *    the session reconciles to COMPLETED instead of leaving a paid order orphaned;
 *  - OPEN | BOUND → CANCELLED (`cancel`; no public route yet, see service.cancelSession);
 *  - SIGNED is kept only as a compatibility value of the wire format: nothing produces it.
 */
// The list is the wire's (packages/protocol/src/states.ts); the moves between them are the server's.
export { SESSION_STATUSES, type SessionStatus };

export type SessionTrigger = 'bind' | 'rebind' | 'complete' | 'fail' | 'expire' | 'cancel';

/** From → trigger → to. Absent entries are illegal moves. */
export const SESSION_TRANSITIONS = {
  OPEN: { bind: 'BOUND', complete: 'COMPLETED', fail: 'FAILED', expire: 'EXPIRED', cancel: 'CANCELLED' },
  BOUND: { rebind: 'BOUND', complete: 'COMPLETED', fail: 'FAILED', expire: 'EXPIRED', cancel: 'CANCELLED' },
  EXPIRED: { complete: 'COMPLETED' },
  COMPLETED: {},
  CANCELLED: {},
  FAILED: {},
  SIGNED: {},
} as const satisfies Record<SessionStatus, Partial<Record<SessionTrigger, SessionStatus>>>;

/** The target of `trigger` from `from`, or undefined when the move is illegal. */
export function nextSessionStatus(from: SessionStatus, trigger: SessionTrigger): SessionStatus | undefined {
  const row: Partial<Record<SessionTrigger, SessionStatus>> = SESSION_TRANSITIONS[from];
  return row[trigger];
}

/**
 * The status `trigger` leads to. Every trigger has one target whatever its source (the unit test
 * checks this against the table), which lets one conditional UPDATE serve all of its sources.
 */
export function sessionTargetOf(trigger: SessionTrigger): SessionStatus {
  switch (trigger) {
    case 'bind':
    case 'rebind':
      return 'BOUND';
    case 'complete':
      return 'COMPLETED';
    case 'fail':
      return 'FAILED';
    case 'expire':
      return 'EXPIRED';
    case 'cancel':
      return 'CANCELLED';
    default: {
      const never: never = trigger;
      throw new Error(`unknown session trigger ${never as string}`);
    }
  }
}

/** The statuses from which `trigger` is legal (the `WHERE status IN (…)` of a conditional UPDATE). */
export function sessionSourcesOf(trigger: SessionTrigger): SessionStatus[] {
  return SESSION_STATUSES.filter((s) => nextSessionStatus(s, trigger) !== undefined);
}

/** Whether a payer may still start or continue a payment on a session in this status. */
export function isPayable(s: SessionStatus): boolean {
  switch (s) {
    case 'OPEN':
    case 'BOUND':
      return true;
    case 'COMPLETED':
    case 'EXPIRED':
    case 'CANCELLED':
    case 'FAILED':
    case 'SIGNED':
      return false;
    default: {
      const never: never = s;
      throw new Error(`unknown session status ${never as string}`);
    }
  }
}

/**
 * What an order status change means for the session that order belongs to. Only INVOICED
 * completes a session; PAYMENT_CONFIRMED is not completion (docs/orders.md: not permission to ship). An order that
 * expired or was cancelled leaves the session as it is: while the session is open, a new bind may
 * create a new order.
 *
 * @example sessionTriggerForOrder('INVOICED') // => 'complete'
 * @example sessionTriggerForOrder('PAYMENT_CONFIRMED') // => undefined
 */
export function sessionTriggerForOrder(to: OrderStatus): 'complete' | 'fail' | undefined {
  switch (to) {
    case 'INVOICED':
      return 'complete';
    case 'FAILED':
      return 'fail';
    case 'CHECKOUT_VERIFIED':
    case 'PAYMENT_CONFIRMED':
    case 'EXPIRED':
    case 'CANCELLED':
      return undefined;
    default: {
      const never: never = to;
      throw new Error(`unknown order status ${never as string}`);
    }
  }
}

/** The facts about a session's bound order that expiry depends on. */
export interface BoundOrderFacts {
  status: OrderStatus;
  /** A paying transfer has been matched (even unconfirmed). */
  paymentSeen: boolean;
}

/**
 * Whether a session is expired at `nowMs`: past `expires_at` and either OPEN, or BOUND to an order
 * that has no payment seen (live and unpaid, or already expired/cancelled). A BOUND session whose
 * order's payment was seen keeps following the order and completes when it is invoiced, even after
 * `expires_at`. The sweeper persists exactly this predicate (repo.listExpirableSessions mirrors it
 * in SQL); reads use it so a session never looks payable for the second the sweeper has not run.
 */
export function isExpiredAt(s: { status: SessionStatus; expiresAt: Date }, order: BoundOrderFacts | undefined, nowMs: number): boolean {
  if (nowMs < s.expiresAt.getTime()) return false;
  // An OPEN session has an order only when a card payment was started on it: once the processor
  // reported that payment, the session waits for its outcome (docs/card-payments.md: a card session
  // stays OPEN while its payment is processing or held).
  if (s.status === 'OPEN') return !order?.paymentSeen;
  if (s.status !== 'BOUND') return false;
  if (!order) return true;
  if (order.paymentSeen) return false;
  return order.status === 'CHECKOUT_VERIFIED' || order.status === 'EXPIRED' || order.status === 'CANCELLED';
}

/** The status to show at `nowMs`: the stored status, or EXPIRED when the sweeper is about to persist it. */
export function effectiveStatus(s: { status: SessionStatus; expiresAt: Date }, order: BoundOrderFacts | undefined, nowMs: number): SessionStatus {
  return isExpiredAt(s, order, nowMs) ? 'EXPIRED' : s.status;
}

/** Orders that can still be paid: a live bound order blocks a bind by another payer or token. */
export function isLiveOrder(s: OrderStatus): boolean {
  return s === 'CHECKOUT_VERIFIED' || s === 'PAYMENT_CONFIRMED';
}
