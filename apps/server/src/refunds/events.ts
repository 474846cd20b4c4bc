import type { Queryable } from '../db/database.ts';
import type { OrderRow } from '../orders/repo.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import type { RefundRow } from './repo.ts';
import { refundRecord } from './views.ts';

/**
 * `order.refunded`: one event per succeeded refund, whatever the rail, written in the caller's
 * transaction with the change that made the refund succeed (so it is emitted exactly once: the
 * callers move a refund out of `pending` only once). `order` must already carry the new
 * `refunded_amount`.
 */
export async function emitRefunded(tx: Queryable, refund: RefundRow, order: OrderRow, now: Date): Promise<void> {
  await emitEvent(tx, { merchantId: order.merchant_id, event: 'order.refunded', orderId: order.id, clockNow: now, payload: refundRecord(refund, order) });
}
