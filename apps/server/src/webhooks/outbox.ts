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
 * emitEvent for many events in the caller's transaction, in three statements whatever their
 * number (the endpoints of their merchants, the events, their deliveries) instead of one per
 * event: the worker announcing a busy stream of machine payments (mpp/events.ts) emitted one
 * statement per payment, and that was most of the database work those payments caused
 * (bench/mpp-verify.ts, CPU per request with the worker running). Same rows as emitEvent; the
 * endpoints are read inside the transaction, as emitEvent's statement reads them. Returns the
 * number of deliveries created.
 */
export async function emitEvents(tx: Queryable, events: readonly EmittedEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  if (events.length === 1) return (await emitEvent(tx, events[0]!)).deliveries;
  const { rows: endpoints } = await tx.query<{ id: string; merchant_id: string; events: string[] }>(
    'SELECT id, merchant_id, events FROM webhook_endpoints WHERE merchant_id = ANY ($1::text[]) AND enabled ORDER BY id',
    [[...new Set(events.map((e) => e.merchantId))]],
    { name: 'outbox_endpoints_of' },
  );
  const ids = events.map(() => newId('evt'));
  await tx.query(
    `INSERT INTO webhook_events (id, merchant_id, event, payload, order_id, test, created_at)
     SELECT id, merchant_id, event, payload::json, order_id, test, created_at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::timestamptz[])
       AS u(id, merchant_id, event, payload, order_id, test, created_at)`,
    [ids, events.map((e) => e.merchantId), events.map((e) => e.event), events.map((e) => JSON.stringify(e.payload)), events.map((e) => e.orderId ?? null), events.map((e) => e.test ?? false), events.map((e) => e.clockNow)],
    { name: 'outbox_insert_events' },
  );
  const d = events.flatMap((e, i) => endpoints.filter((ep) => ep.merchant_id === e.merchantId && ep.events.includes(e.event)).map((ep) => ({ e, eventId: ids[i]!, endpointId: ep.id })));
  if (d.length === 0) return 0;
  await tx.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, event, order_id, status, next_attempt_at, created_at)
     SELECT id, event_id, endpoint_id, merchant_id, event, order_id, 'pending', at, at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
       AS u(id, event_id, endpoint_id, merchant_id, event, order_id, at)`,
    [d.map(() => newId('whd')), d.map((x) => x.eventId), d.map((x) => x.endpointId), d.map((x) => x.e.merchantId), d.map((x) => x.e.event), d.map((x) => x.e.orderId ?? null), d.map((x) => x.e.clockNow)],
    { name: 'outbox_insert_deliveries' },
  );
  return d.length;
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
