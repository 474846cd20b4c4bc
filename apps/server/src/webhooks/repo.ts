import type { Queryable } from '../db/database.ts';

/** Row shapes and SQL of webhook endpoints and the event feed; no business rules here. */
export interface EndpointRow {
  id: string;
  merchant_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function countEnabledEndpoints(q: Queryable, merchantId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE merchant_id = $1 AND enabled', [merchantId]);
  return rows[0]?.n ?? 0;
}

export async function insertEndpoint(q: Queryable, e: { id: string; merchantId: string; url: string; events: string[]; ciphertext: string; now: Date }): Promise<EndpointRow> {
  const { rows } = await q.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, merchant_id, url, events, secret_ciphertext, created_at, updated_at)
     VALUES ($1, $2, $3, $4::text[], $5, $6, $6) RETURNING *`,
    [e.id, e.merchantId, e.url, e.events, e.ciphertext, e.now],
  );
  return rows[0]!;
}

export async function listEndpoints(q: Queryable, merchantId: string): Promise<EndpointRow[]> {
  const { rows } = await q.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE merchant_id = $1 ORDER BY created_at, id', [merchantId]);
  return rows;
}

/** The endpoint of one merchant, locked for update (enable/disable/rotate serialize on it). */
export async function lockEndpoint(q: Queryable, merchantId: string, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await q.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [id, merchantId]);
  return rows[0];
}

export async function setEndpointEnabled(q: Queryable, id: string, enabled: boolean, now: Date): Promise<EndpointRow> {
  const { rows } = await q.query<EndpointRow>('UPDATE webhook_endpoints SET enabled = $2, updated_at = $3 WHERE id = $1 RETURNING *', [id, enabled, now]);
  return rows[0]!;
}

/** Installs a new secret; the old one keeps signing until `previousUntil` (null: dropped now). */
export async function rotateEndpointSecret(q: Queryable, id: string, r: { ciphertext: string; previousCiphertext: string | null; previousUntil: Date | null; now: Date }): Promise<EndpointRow> {
  const { rows } = await q.query<EndpointRow>(
    `UPDATE webhook_endpoints SET secret_ciphertext = $2, previous_secret_ciphertext = $3, previous_secret_expires_at = $4, updated_at = $5
     WHERE id = $1 RETURNING *`,
    [id, r.ciphertext, r.previousCiphertext, r.previousUntil, r.now],
  );
  return rows[0]!;
}

export interface EventRow {
  id: string;
  merchant_id: string;
  event: string;
  payload: unknown;
  order_id: string | null;
  test: boolean;
  created_at: Date;
}

export async function eventExists(q: Queryable, merchantId: string, id: string): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM webhook_events WHERE id = $1 AND merchant_id = $2', [id, merchantId]);
  return r.rowCount > 0;
}

// Only events of transactions older than every running one are served: those can no longer be
// joined by an earlier-ordered event committing late. Paging by (txid, seq) then never skips one.
const SETTLED = 'txid < pg_snapshot_xmin(pg_current_snapshot())';

/**
 * The merchant's events after the cursor event (or from the first), in feed order. The order is
 * that of the writing transactions, then creation within one: close to creation order, and stable.
 */
export async function listEventsAfter(q: Queryable, merchantId: string, after: string | undefined, limit: number): Promise<EventRow[]> {
  const { rows } = await q.query<EventRow>(
    `SELECT id, merchant_id, event, payload, order_id, test, created_at FROM webhook_events
     WHERE merchant_id = $1 AND ${SETTLED}
       AND ($2::text IS NULL OR (txid, seq) > (SELECT c.txid, c.seq FROM webhook_events c WHERE c.id = $2 AND c.merchant_id = $1))
     ORDER BY txid, seq LIMIT $3`,
    [merchantId, after ?? null, limit],
  );
  return rows;
}

/** The newest settled event of a merchant: where a feed that starts "now" begins. */
export async function latestEventId(q: Queryable, merchantId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ id: string }>(`SELECT id FROM webhook_events WHERE merchant_id = $1 AND ${SETTLED} ORDER BY txid DESC, seq DESC LIMIT 1`, [merchantId]);
  return rows[0]?.id;
}
