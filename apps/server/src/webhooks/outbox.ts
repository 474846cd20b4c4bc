import { randomBytes } from 'node:crypto';
import { encodeBase58Fixed, ID_DEFAULT_BYTES, newId, type WebhookEventName } from '@tollgate/protocol';
import type { Queryable } from '../db/database.ts';
import type { OrderStatus } from '../orders/states.ts';
import { MAX_ENABLED_ENDPOINTS } from './limits.ts';

export interface EmittedEvent {
  merchantId: string;
  event: WebhookEventName;
  /** Serialized once with JSON.stringify and stored verbatim; the dispatcher sends these bytes. */
  payload: object;
  orderId?: string | undefined;
  /** Event time, and when its first deliveries become due. */
  clockNow: Date;
  /** Emitted by `tollgate trigger` (test data, not a real state change). */
  test?: boolean;
}

/**
 * Writes one event to the outbox in the CALLER's transaction: the `webhook_events` row and one
 * pending `webhook_deliveries` row per enabled endpoint of the merchant subscribed to the event.
 * When the state change commits, its deliveries exist; when it rolls back, they never did. The
 * dispatcher takes it from there, also after a crash (kill -9) between commit and send.
 *
 * One statement (data-modifying CTEs): the order transition pays one round trip, whatever the
 * number of endpoints. Delivery ids are minted here (`whd_` base58, like every id) for the at most
 * {@link MAX_ENABLED_ENDPOINTS} enabled endpoints; the `gen_random_uuid` fallback only guards the
 * statement against a limit ever being exceeded (a NULL id would abort the caller's transition).
 *
 * @example
 * await db.transaction(async (tx) => {
 *   const row = await transitionOrder(tx, …);
 *   await emitEvent(tx, { merchantId: row.merchant_id, event: 'order.cancelled', payload: orderStatusRecord(row), orderId: row.id, clockNow: new Date() });
 * });
 */
export async function emitEvent(tx: Queryable, e: EmittedEvent): Promise<{ eventId: string; deliveries: number }> {
  const eventId = newId('evt');
  // One random draw for all candidate ids (same format as newId('whd')): minting five ids with
  // five randomBytes calls was the largest CPU cost of emitting (bench/webhooks.ts profile).
  const n = ID_DEFAULT_BYTES.whd;
  const rnd = randomBytes(n * MAX_ENABLED_ENDPOINTS);
  const deliveryIds = Array.from({ length: MAX_ENABLED_ENDPOINTS }, (_, i) => `whd_${encodeBase58Fixed(rnd.subarray(i * n, (i + 1) * n))}`);
  const { rows } = await tx.query<{ n: number }>(
    `WITH ev AS (
       INSERT INTO webhook_events (id, merchant_id, event, payload, order_id, test, created_at)
       VALUES ($1, $2, $3, $4::json, $5, $6, $7)
       RETURNING id
     ), ep AS (
       SELECT e.id, row_number() OVER (ORDER BY e.id) AS n
       FROM webhook_endpoints e
       WHERE e.merchant_id = $2 AND e.enabled AND $3 = ANY (e.events)
     ), d AS (
       INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, event, order_id, status, next_attempt_at, created_at)
       SELECT coalesce(($8::text[])[ep.n], 'whd_' || replace(gen_random_uuid()::text, '-', '')), ev.id, ep.id, $2, $3, $5, 'pending', $7, $7
       FROM ev CROSS JOIN ep
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM d`,
    [eventId, e.merchantId, e.event, JSON.stringify(e.payload), e.orderId ?? null, e.test ?? false, e.clockNow, deliveryIds],
  );
  return { eventId, deliveries: rows[0]?.n ?? 0 };
}

/**
 * The webhook event an order status change emits, if any. A move back to CHECKOUT_VERIFIED (a reorg
 * orphaned the payment) emits nothing: PAYMENT_CONFIRMED was never a fulfilment gate, and the
 * polling record shows the regress. An order that goes straight to INVOICED emits only
 * `order.invoiced` (interface.md rule 1: not every intermediate state is visible).
 *
 * @example orderEventFor('INVOICED') // => 'order.invoiced'
 */
export function orderEventFor(to: OrderStatus): WebhookEventName | undefined {
  switch (to) {
    case 'PAYMENT_CONFIRMED':
      return 'order.payment_confirmed';
    case 'INVOICED':
      return 'order.invoiced';
    case 'EXPIRED':
      return 'order.expired';
    case 'CANCELLED':
      return 'order.cancelled';
    case 'FAILED':
      return 'order.failed';
    case 'CHECKOUT_VERIFIED':
      return undefined;
    default: {
      const never: never = to;
      throw new Error(`unknown order status ${never as string}`);
    }
  }
}
