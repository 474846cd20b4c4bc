import type { Queryable } from '../db/database.ts';

/**
 * The scrape-time reads of /metrics. Each is one statement; `bench/` measured them (see
 * docs/operations.md "Cost of a scrape"). No business rules here.
 */

export interface OrderCountRow {
  status: string;
  flow: string;
  n: number;
}

/**
 * Orders by status and flow, every status: one aggregate over the whole orders table, so its cost
 * grows with the table (~0.5 s at a million orders): the caller runs it rarely.
 */
export async function countOrders(q: Queryable): Promise<OrderCountRow[]> {
  const { rows } = await q.query<OrderCountRow>('SELECT status, flow, count(*)::int AS n FROM orders GROUP BY status, flow');
  return rows;
}

/**
 * Live orders (CHECKOUT_VERIFIED, PAYMENT_CONFIRMED) by status and flow, through the partial
 * indexes of those statuses: the cost follows the live orders, not the table. A PAYMENT_CONFIRMED
 * order always names its transfer (the only move that clears it, a reorg's orphan, also moves the
 * order back to CHECKOUT_VERIFIED), so the `transfer_id IS NOT NULL` of the depth index loses none.
 */
export async function countLiveOrders(q: Queryable): Promise<OrderCountRow[]> {
  const { rows } = await q.query<OrderCountRow>(
    `SELECT status, flow, count(*)::int AS n FROM orders WHERE status = 'CHECKOUT_VERIFIED' GROUP BY status, flow
     UNION ALL
     SELECT status, flow, count(*)::int AS n FROM orders WHERE status = 'PAYMENT_CONFIRMED' AND transfer_id IS NOT NULL GROUP BY status, flow`,
  );
  return rows;
}

export interface WebhookBacklog {
  pending: number;
  failed: number;
  /** Of those, due now (a healthy dispatcher keeps this near 0). */
  due: number;
  /** Age of the oldest undelivered delivery, seconds (0 when none). */
  oldest_age_s: number;
  /** How late the most overdue delivery is, seconds (0 when none is due). */
  oldest_due_s: number;
}

/**
 * The undelivered queue, through the partial due index (its rows only). Deliveries of disabled
 * endpoints are left out: nobody sends them until the endpoint is enabled again, by design.
 * In flight rows are not due: a claim moves `next_attempt_at` to the lease end.
 */
export async function webhookBacklog(q: Queryable, now: Date): Promise<WebhookBacklog> {
  const { rows } = await q.query<WebhookBacklog>(
    `SELECT count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
            count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
            count(*) FILTER (WHERE d.next_attempt_at <= $1)::int AS due,
            COALESCE(EXTRACT(EPOCH FROM ($1 - min(d.created_at))), 0)::float8 AS oldest_age_s,
            COALESCE(EXTRACT(EPOCH FROM ($1 - min(d.next_attempt_at) FILTER (WHERE d.next_attempt_at <= $1))), 0)::float8 AS oldest_due_s
     FROM webhook_deliveries d
     WHERE d.status IN ('pending', 'failed')
       AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)`,
    [now],
  );
  return rows[0]!;
}

export interface CursorRow {
  chain_id: number;
  block_number: number;
  /** Unix seconds of the last scanned block, when the watcher recorded it. */
  block_ts: number | null;
}

/** Every chain's scan cursor: how far the watcher has scanned, in blocks and in chain time. */
export async function chainCursors(q: Queryable): Promise<CursorRow[]> {
  const { rows } = await q.query<CursorRow>('SELECT chain_id, block_number, EXTRACT(EPOCH FROM block_timestamp)::float8 AS block_ts FROM chain_cursors');
  return rows;
}

/**
 * Age in seconds of the oldest open transaction on the database server that this role can see
 * (0 when none but this one). Transaction ids are server-wide: the webhook event feed serves an
 * event only once every transaction older than it has ended (webhooks/repo.ts SETTLED), so a long
 * transaction of any application on a shared server holds the feed back. A role without
 * `pg_read_all_stats` (or `pg_monitor`) sees only its own sessions' transactions.
 */
export async function oldestOpenTransactionAgeS(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ s: number }>(
    `SELECT coalesce(EXTRACT(EPOCH FROM now() - min(xact_start)), 0)::float8 AS s
       FROM pg_stat_activity WHERE backend_xid IS NOT NULL OR backend_xmin IS NOT NULL`,
  );
  return Math.max(0, rows[0]?.s ?? 0);
}
