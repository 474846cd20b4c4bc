import type { Queryable } from '../db/database.ts';
import { outboxWritten } from './outbox-signal.ts';

/** SQL of the delivery queue: claim, record, list, redeliver. No business rules here. */
export type DeliveryStatus = 'pending' | 'failed' | 'delivered' | 'dead';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'failed', 'delivered', 'dead'];

export interface ClaimedDelivery {
  id: string;
  event_id: string;
  attempt_count: number;
  event: string;
  /** The payload's stored JSON text, spliced into the envelope as is. */
  payload: string;
  endpoint_id: string;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints for `workerId`, in one statement:
 * `FOR UPDATE SKIP LOCKED` lets concurrent dispatchers take disjoint rows without waiting; the
 * claim bumps `attempt_count` (this send's number) and moves `next_attempt_at` to the lease end,
 * so a dispatcher that dies holding the rows gives them back when the lease lapses, through the
 * same due index, with no sweeper.
 */
export async function claimDue(q: Queryable, a: { workerId: string; now: Date; leaseUntil: Date; limit: number }): Promise<ClaimedDelivery[]> {
  const { rows } = await q.query<ClaimedDelivery>(
    `WITH due AS (
       SELECT d.id FROM webhook_deliveries d
       WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= $1
         AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
       ORDER BY d.next_attempt_at
       LIMIT $2
       FOR UPDATE SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d
       SET attempt_count = d.attempt_count + 1, locked_by = $3, locked_until = $4, next_attempt_at = $4
       FROM due WHERE d.id = due.id
       RETURNING d.id, d.event_id, d.endpoint_id, d.attempt_count
     )
     SELECT c.id, c.event_id, c.attempt_count, ev.event, ev.payload::text AS payload, ep.id AS endpoint_id, ep.url,
            ep.secret_ciphertext, ep.previous_secret_ciphertext, ep.previous_secret_expires_at
     FROM claimed c
     JOIN webhook_events ev ON ev.id = c.event_id
     JOIN webhook_endpoints ep ON ep.id = c.endpoint_id`,
    [a.now, a.limit, a.workerId, a.leaseUntil],
  );
  return rows;
}

export interface AttemptResult {
  deliveryId: string;
  attempt: number;
  /** The delivery's status after this attempt. */
  status: DeliveryStatus;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  refused: boolean;
  responseBody: string | null;
  /** When the next attempt is due (failed), else null. */
  nextAttemptAt: Date | null;
}

/**
 * Records a batch of attempts and the new delivery states in ONE statement: a multi-row INSERT of
 * the attempts and one `UPDATE … FROM unnest(…)`. The update only touches rows this worker still
 * holds at this attempt number (`locked_by`, `attempt_count`): a dispatcher whose lease lapsed
 * and whose rows were re-claimed cannot overwrite the newer attempt's state. Its attempt row is
 * kept regardless (the request did go out). Returns how many deliveries were updated.
 */
export async function recordResults(q: Queryable, workerId: string, results: AttemptResult[]): Promise<number> {
  if (results.length === 0) return 0;
  const col = <T>(f: (r: AttemptResult) => T) => results.map(f);
  const r = await q.query(
    `WITH v AS (
       SELECT * FROM unnest($2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::int[], $7::int[], $8::text[], $9::boolean[], $10::text[], $11::timestamptz[])
         AS v(id, attempt, status, attempted_at, status_code, latency_ms, error, refused, response_body, next_attempt_at)
     ), ins AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error, refused, response_body)
       SELECT id, attempt, attempted_at, status_code, latency_ms, error, refused, response_body FROM v
       ON CONFLICT (delivery_id, attempt) DO NOTHING
     )
     UPDATE webhook_deliveries d
     SET status = v.status, next_attempt_at = v.next_attempt_at, locked_by = NULL, locked_until = NULL,
         last_attempt_at = v.attempted_at, last_status_code = v.status_code, last_error = v.error,
         delivered_at = CASE WHEN v.status = 'delivered' THEN v.attempted_at ELSE d.delivered_at END
     FROM v
     WHERE d.id = v.id AND d.locked_by = $1 AND d.attempt_count = v.attempt`,
    [
      workerId,
      col((x) => x.deliveryId),
      col((x) => x.attempt),
      col((x) => x.status),
      col((x) => x.attemptedAt),
      col((x) => x.statusCode),
      col((x) => x.latencyMs),
      col((x) => x.error),
      col((x) => x.refused),
      col((x) => x.responseBody),
      col((x) => x.nextAttemptAt),
    ],
  );
  return r.rowCount;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  merchant_id: string;
  event: string;
  order_id: string | null;
  redelivery_of: string | null;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  locked_by: string | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
  url: string;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  refused: boolean;
  response_body: string | null;
}

export interface DeliveryFilter {
  event?: string | undefined;
  orderId?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Keyset pagination: deliveries older than this one. */
  before?: string | undefined;
  limit: number;
}

/** A merchant's deliveries, newest first, optionally filtered. */
export async function listDeliveries(q: Queryable, merchantId: string, f: DeliveryFilter): Promise<DeliveryRow[]> {
  const { rows } = await q.query<DeliveryRow>(
    `SELECT d.*, ep.url FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
     WHERE d.merchant_id = $1
       AND ($2::text IS NULL OR d.event = $2)
       AND ($3::text IS NULL OR d.order_id = $3)
       AND ($4::text IS NULL OR d.status = $4)
       AND ($5::text IS NULL OR (d.created_at, d.id) < (SELECT b.created_at, b.id FROM webhook_deliveries b WHERE b.id = $5))
     ORDER BY d.created_at DESC, d.id DESC
     LIMIT $6`,
    [merchantId, f.event ?? null, f.orderId ?? null, f.status ?? null, f.before ?? null, f.limit],
  );
  return rows;
}

export async function listAttempts(q: Queryable, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await q.query<AttemptRow>(
    `SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, refused, response_body
     FROM webhook_attempts WHERE delivery_id = ANY ($1::text[]) ORDER BY delivery_id, attempt`,
    [deliveryIds],
  );
  return rows;
}

/** One delivery of a merchant, locked, with its endpoint's URL and enabled flag. */
export async function lockDelivery(q: Queryable, merchantId: string, id: string): Promise<(DeliveryRow & { endpoint_enabled: boolean }) | undefined> {
  const { rows } = await q.query<DeliveryRow & { endpoint_enabled: boolean }>(
    `SELECT d.*, ep.url, ep.enabled AS endpoint_enabled FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
     WHERE d.id = $1 AND d.merchant_id = $2 FOR UPDATE OF d`,
    [id, merchantId],
  );
  return rows[0];
}

export async function getDelivery(q: Queryable, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await q.query<DeliveryRow>('SELECT d.*, ep.url FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id WHERE d.id = $1', [id]);
  return rows[0];
}

/**
 * Makes failed deliveries due now, except those a dispatcher holds (in flight). Returns the ids.
 * `ids` undefined: every failed delivery of the merchant created since `since` on an enabled endpoint.
 */
export async function requeueFailed(q: Queryable, a: { merchantId: string; now: Date; ids?: string[]; since?: Date }): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `UPDATE webhook_deliveries d SET next_attempt_at = $2
     WHERE d.merchant_id = $1 AND d.status = 'failed' AND d.next_attempt_at > $2
       AND (d.locked_until IS NULL OR d.locked_until <= $2)
       AND ($3::text[] IS NULL OR d.id = ANY ($3::text[]))
       AND ($4::timestamptz IS NULL OR d.created_at >= $4)
       AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
     RETURNING d.id`,
    [a.merchantId, a.now, a.ids ?? null, a.since ?? null],
  );
  return rows.map((r) => r.id);
}

/** Dead deliveries since `since` on enabled endpoints that have not been redelivered yet. */
export async function listRedeliverableDead(q: Queryable, merchantId: string, since: Date, limit: number): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT d.id FROM webhook_deliveries d
     WHERE d.merchant_id = $1 AND d.status = 'dead' AND d.created_at >= $2
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r WHERE r.redelivery_of = d.id)
       AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
     ORDER BY d.created_at LIMIT $3
     FOR UPDATE OF d`,
    [merchantId, since, limit],
  );
  return rows.map((r) => r.id);
}

/** New pending deliveries (fresh attempt schedule) of the same events to the same endpoints. */
export async function insertRedeliveries(q: Queryable, pairs: { newId: string; of: string }[], now: Date): Promise<void> {
  if (pairs.length === 0) return;
  await q.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, event, order_id, redelivery_of, status, next_attempt_at, created_at)
     SELECT v.new_id, d.event_id, d.endpoint_id, d.merchant_id, d.event, d.order_id, d.id, 'pending', $3, $3
     FROM unnest($1::text[], $2::text[]) AS v(new_id, of_id) JOIN webhook_deliveries d ON d.id = v.of_id`,
    [pairs.map((p) => p.newId), pairs.map((p) => p.of), now],
  );
  outboxWritten();
}
