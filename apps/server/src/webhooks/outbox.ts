import { randomBytes } from 'node:crypto';
import { encodeBase58Fixed, ID_DEFAULT_BYTES, newId, type WebhookEventName } from '@tollgate/protocol';
import type { Queryable } from '../db/database.ts';
import type { OrderStatus } from '../orders/states.ts';
import { MAX_ENABLED_ENDPOINTS } from './limits.ts';
import { outboxWritten } from './outbox-signal.ts';

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
 * The outbox write as two data-modifying CTEs (`outbox_events`, `outbox_deliveries`) for the
 * caller to append to its own statement, so a state change and its events commit in one
 * statement: the `webhook_events` row of each row of `source`, and one pending
 * `webhook_deliveries` row per enabled endpoint of the event's merchant subscribed to it. The one
 * place that SQL lives: emitEvents uses it, and so does the machine-payment claim (mpp/repo.ts).
 *
 * `source` names a relation with the columns event_id, merchant_id, event, payload (JSON text,
 * stored verbatim), order_id, test, created_at and ord (1-based position); `deliveryIds` is the
 * placeholder of a text[] from {@link mintDeliveryIds}: row `ord` takes its ids from slots
 * (ord - 1) * MAX_ENABLED_ENDPOINTS + 1 onwards. The `gen_random_uuid` fallback only guards the
 * statement against that limit ever being exceeded (a NULL id would abort the caller's change).
 */
export function outboxCtes(source: string, deliveryIds: string): string {
  return `outbox_events AS (
       INSERT INTO webhook_events (id, merchant_id, event, payload, order_id, test, created_at)
       SELECT event_id, merchant_id, event, payload::json, order_id, test, created_at FROM ${source} ORDER BY ord
       RETURNING id
     ), outbox_deliveries AS (
       INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, event, order_id, status, next_attempt_at, created_at)
       SELECT coalesce((${deliveryIds}::text[])[(s.ord - 1) * ${MAX_ENABLED_ENDPOINTS} + ep.n], 'whd_' || replace(gen_random_uuid()::text, '-', '')),
         ev.id, ep.id, s.merchant_id, s.event, s.order_id, 'pending', s.created_at, s.created_at
       FROM outbox_events ev JOIN ${source} s ON s.event_id = ev.id
       CROSS JOIN LATERAL (
         SELECT e.id, row_number() OVER (ORDER BY e.id) AS n FROM webhook_endpoints e
          WHERE e.merchant_id = s.merchant_id AND e.enabled AND s.event = ANY (e.events)
       ) ep
       RETURNING 1
     )`;
}

/**
 * Delivery ids for `events` events: MAX_ENABLED_ENDPOINTS each (same format as newId('whd')),
 * from one random draw: minting them with one randomBytes call each was the largest CPU cost of
 * emitting (bench/webhooks.ts profile).
 */
export function mintDeliveryIds(events: number): string[] {
  const n = ID_DEFAULT_BYTES.whd;
  const count = events * MAX_ENABLED_ENDPOINTS;
  const rnd = randomBytes(n * count);
  return Array.from({ length: count }, (_, i) => `whd_${encodeBase58Fixed(rnd.subarray(i * n, (i + 1) * n))}`);
}

/**
 * Writes one event to the outbox in the CALLER's transaction: the `webhook_events` row and one
 * pending `webhook_deliveries` row per enabled endpoint of the merchant subscribed to the event.
 * When the state change commits, its deliveries exist; when it rolls back, they never did. The
 * dispatcher takes it from there, also after a crash (kill -9) between commit and send.
 *
 * @example
 * await db.transaction(async (tx) => {
 *   const row = await transitionOrder(tx, …);
 *   await emitEvent(tx, { merchantId: row.merchant_id, event: 'order.cancelled', payload: orderStatusRecord(row), orderId: row.id, clockNow: new Date() });
 * });
 */
export async function emitEvent(tx: Queryable, e: EmittedEvent): Promise<{ eventId: string; deliveries: number }> {
  const eventId = newId('evt');
  return { eventId, deliveries: await writeEvents(tx, [e], [eventId]) };
}

/**
 * emitEvent for many events in the caller's transaction, in one statement whatever their number
 * (data-modifying CTEs: one round trip, whatever the number of events and endpoints). Returns the
 * number of deliveries created.
 */
export async function emitEvents(tx: Queryable, events: readonly EmittedEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  return writeEvents(
    tx,
    events,
    events.map(() => newId('evt')),
  );
}

async function writeEvents(tx: Queryable, events: readonly EmittedEvent[], ids: readonly string[]): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `WITH outbox_src AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::timestamptz[]) WITH ORDINALITY
         AS u(event_id, merchant_id, event, payload, order_id, test, created_at, ord)
     ), ${outboxCtes('outbox_src', '$8')}
     SELECT count(*)::int AS n FROM outbox_deliveries`,
    [ids, events.map((e) => e.merchantId), events.map((e) => e.event), events.map((e) => JSON.stringify(e.payload)), events.map((e) => e.orderId ?? null), events.map((e) => e.test ?? false), events.map((e) => e.clockNow), mintDeliveryIds(events.length)],
    // Named: planned once per connection (every order transition that emits runs it).
    { name: 'outbox_write_events' },
  );
  const n = rows[0]?.n ?? 0;
  if (n > 0) outboxWritten();
  return n;
}

/**
 * The webhook event an order status change emits, if any. A move back to CHECKOUT_VERIFIED (a reorg
 * orphaned the payment) emits nothing: PAYMENT_CONFIRMED was never a fulfilment gate, and the
 * polling record shows the regress. An order that goes straight to INVOICED emits only
 * `order.invoiced` (docs/orders.md: a poller may see INVOICED without PAYMENT_CONFIRMED).
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
