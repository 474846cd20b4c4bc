import type { Queryable } from '../db/database.ts';
import type { OrderRow } from '../orders/repo.ts';
import type { OrderStatus } from '../orders/states.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { sessionTriggerForOrder } from './states.ts';
import { transitionSession } from './transition.ts';
import type { SessionRow } from './repo.ts';

/**
 * The order → session hook: a follower of every order transition (orders/transition.ts's
 * followTransitions, registered by main.ts), run right after the order moved, in the same
 * transaction: a session and its order can never disagree after a commit, and the
 * `quickpay.checkout.completed` event exists exactly when the session is COMPLETED (outbox).
 *
 * - INVOICED → the session completes (from OPEN, BOUND, or EXPIRED when the payment was recorded
 *   after the sweeper expired the session; see checkout/states.ts) and the event is emitted;
 * - FAILED → the session fails;
 * - everything else (PAYMENT_CONFIRMED, EXPIRED, CANCELLED, a reorg back to CHECKOUT_VERIFIED)
 *   leaves the session as it is. Orders without a checkout_id cost nothing: no query.
 */
export async function syncSessionWithOrder(tx: Queryable, order: OrderRow, to: OrderStatus, now: Date = new Date()): Promise<void> {
  if (order.checkout_id === null) return;
  const trigger = sessionTriggerForOrder(to);
  if (!trigger) return;
  const moved = await transitionSession(tx, {
    id: order.checkout_id,
    trigger,
    patch: trigger === 'complete' ? { order_id: order.id, completed_at: now } : { order_id: order.id },
    orderId: order.id,
  });
  if (!moved || trigger !== 'complete') return;
  await emitEvent(tx, {
    merchantId: moved.row.merchant_id,
    event: 'quickpay.checkout.completed',
    payload: checkoutCompletedPayload(moved.row, order, to),
    orderId: order.id,
    // The event time; the caller may pass its own clock (the order's event uses the same one).
    clockNow: now,
  });
}

/**
 * The `quickpay.checkout.completed` payload (docs/webhooks.md): checkout_id, order_id, order_status, tx_hash?,
 * client_reference_id?, line_items, public_metadata — exactly, so never private metadata (webhook
 * endpoints are configured apart from the API credentials and are often third-party relays).
 */
function checkoutCompletedPayload(s: SessionRow, order: OrderRow, status: OrderStatus) {
  return {
    checkout_id: s.id,
    order_id: order.id,
    order_status: status,
    ...(order.tx_hash ? { tx_hash: order.tx_hash } : {}),
    ...(s.client_reference_id ? { client_reference_id: s.client_reference_id } : {}),
    line_items: s.line_items,
    public_metadata: s.public_metadata,
  };
}
