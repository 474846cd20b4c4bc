import { formatUnits } from '@tollgate/protocol';
import type { Queryable } from '../db/database.ts';
import type { OrderRow } from '../orders/repo.ts';
import type { OrderStatus } from '../orders/states.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { getProduct, markCompleted, type SessionRow } from './repo.ts';
import { QUICKPAY_ORDER_PREFIX } from './rails/session-order.ts';

const PREFIX = QUICKPAY_ORDER_PREFIX;

/**
 * The order → quick-pay hook: a follower of every order transition (orders/transition.ts's
 * followTransitions, registered by main.ts), run in the same transaction (like checkout/sync.ts).
 * A crypto session is PAYMENT_CONFIRMED as soon as its order is (its status is read from the order,
 * nothing to store); its COMPLETION — the `quickpay.checkout.completed` event — is sent when the
 * order reaches INVOICED, the fulfilment gate, exactly once: `completed_at` is set by a conditional UPDATE and only the transaction that
 * set it emits.
 *
 * Orders that are not a quick-pay session's cost nothing: their dapp_order_id is checked first,
 * and the UPDATE also requires the order's merchant, so an API order that happens to use a
 * `quickpay:` reference completes nothing.
 */
export async function syncQuickPayWithOrder(tx: Queryable, order: OrderRow, to: OrderStatus, now: Date = new Date()): Promise<void> {
  if (to !== 'INVOICED' || !order.dapp_order_id.startsWith(PREFIX)) return;
  const s = await markCompleted(tx, order.dapp_order_id.slice(PREFIX.length), order.id, order.merchant_id, now);
  if (!s) return;
  const productName = s.product_id ? (await getProduct(tx, s.product_id))?.name : undefined;
  await emitEvent(tx, { merchantId: s.merchant_id, event: 'quickpay.checkout.completed', payload: quickpayCompletedPayload(s, order, to, productName), orderId: order.id, clockNow: now });
}

/**
 * The `quickpay.checkout.completed` fields (docs/webhooks.md) (checkout_id — here the quick-pay session id —,
 * order_id, order_status, tx_hash?, client_reference_id?, line_items, public_metadata), plus what a
 * quick-pay receiver reconciles with: the session and link ids, the rail, the amount asked and the
 * amount that arrived (an any-amount confirmation proves only that), and the payer's memo, which is
 * also the client_reference_id (the payer's reference is the only one such a payment has).
 */
function quickpayCompletedPayload(s: SessionRow, order: OrderRow, status: OrderStatus, productName?: string) {
  const paid = order.paid_amount_wei ?? order.amount_wei;
  return {
    checkout_id: s.id,
    session_id: s.id,
    link_id: s.link_id,
    rail: s.rail,
    order_id: order.id,
    order_status: status,
    ...(order.tx_hash ? { tx_hash: order.tx_hash } : {}),
    ...(s.memo ? { client_reference_id: s.memo, memo: s.memo } : {}),
    amount: s.amount,
    amount_paid: formatUnits(BigInt(paid), order.decimals),
    amount_paid_wei: paid,
    chain_id: order.chain_id,
    token_symbol: order.token_symbol,
    line_items: [{ name: productName ?? 'Payment', quantity: 1, amount: s.amount }],
    public_metadata: { ...(s.product_id ? { product_id: s.product_id } : {}) },
  };
}
