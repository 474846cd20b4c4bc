// SQL of the portal's read side: the orders list (keyset pages), the overview, an order's audit
// trail, the fee ledger, and the pages the CSV exports stream. Every query is scoped by merchant.
import type { Queryable } from '../../db/database.ts';

export interface OrderListFilter {
  status?: string | undefined;
  flow?: string | undefined;
  chainId?: number | undefined;
  token?: string | undefined;
  /** created_at >= from */
  from?: Date | undefined;
  /** created_at < to */
  to?: Date | undefined;
  /** order id, dapp_order_id, payer address or transaction hash (exact) */
  search?: string | undefined;
  /** keyset: orders strictly older than (created_us, id) */
  after?: { createdUs: string; id: string } | undefined;
  limit: number;
}

export interface OrderListRow {
  id: string;
  dapp_order_id: string;
  flow: string;
  chain_id: number;
  token_symbol: string;
  decimals: number;
  from_address: string;
  pay_to_address: string;
  amount_wei: string;
  paid_amount_wei: string | null;
  fee_amount: string;
  status: string;
  tx_hash: string | null;
  created_at: Date;
  invoiced_at: Date | null;
  /** created_at in microseconds since the epoch, exact (a JS Date keeps only milliseconds) */
  created_us: string;
  /** card orders: what was charged, and the processor's payment reference */
  fiat_currency?: string | null;
  fiat_amount?: string | null;
  payment_reference?: string | null;
  /** DELEGATE orders: the merchant callback's outcome */
  callback_status?: string | null;
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Builds the WHERE clause of a filtered list. The search term is matched by its shape, each branch
 * an index probe: a tx hash (orders_tx_hash_idx), a payer address (orders_merchant_payer_idx), or
 * an order id (primary key); dapp_order_id (unique per merchant) is always tried too.
 */
function where(merchantId: string, f: Omit<OrderListFilter, 'limit'>, params: unknown[]): string {
  params.push(merchantId);
  const conds = ['o.merchant_id = $1'];
  const add = (sql: (n: string) => string, v: unknown) => {
    params.push(v);
    conds.push(sql(`$${params.length}`));
  };
  if (f.status) add((n) => `o.status = ${n}`, f.status);
  if (f.flow) add((n) => `o.flow = ${n}`, f.flow);
  if (f.chainId !== undefined) add((n) => `o.chain_id = ${n}`, f.chainId);
  if (f.token) add((n) => `o.token_symbol = ${n}`, f.token);
  if (f.from) add((n) => `o.created_at >= ${n}`, f.from);
  if (f.to) add((n) => `o.created_at < ${n}`, f.to);
  if (f.search) {
    const s = f.search.trim();
    params.push(s);
    const raw = `$${params.length}`;
    if (TX_HASH.test(s)) {
      params.push(s.toLowerCase());
      conds.push(`(o.tx_hash = $${params.length} OR o.dapp_order_id = ${raw})`);
    } else if (ADDRESS.test(s)) {
      params.push(s.toLowerCase());
      conds.push(`(o.from_address = $${params.length} OR o.dapp_order_id = ${raw})`);
    } else {
      conds.push(`(o.id = ${raw} OR o.dapp_order_id = ${raw})`);
    }
  }
  if (f.after) {
    params.push(f.after.createdUs, f.after.id);
    // created_at rebuilt from integer microseconds: exact, no float rounding.
    conds.push(`(o.created_at, o.id) < ('epoch'::timestamptz + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::text)`);
  }
  return conds.join(' AND ');
}

const LIST_COLUMNS = `o.id, o.dapp_order_id, o.flow, o.chain_id, o.token_symbol, o.decimals, o.from_address, o.pay_to_address,
  o.amount_wei::text AS amount_wei, o.paid_amount_wei::text AS paid_amount_wei, o.fee_amount::text AS fee_amount, o.status, o.tx_hash,
  o.created_at, o.invoiced_at, o.fiat_currency, o.fiat_amount, o.payment_reference, o.callback_status, ((extract(epoch FROM o.created_at) * 1000000)::numeric(20,0))::text AS created_us`;

/** One page of a merchant's orders, newest first; `limit + 1` rows tell whether another page exists. */
export async function listOrders(q: Queryable, merchantId: string, f: OrderListFilter): Promise<OrderListRow[]> {
  const params: unknown[] = [];
  const w = where(merchantId, f, params);
  params.push(f.limit);
  const { rows } = await q.query<OrderListRow>(`SELECT ${LIST_COLUMNS} FROM orders o WHERE ${w} ORDER BY o.created_at DESC, o.id DESC LIMIT $${params.length}`, params);
  return rows;
}

/** Orders per UTC day, status and token (a card order's: its currency) since `from`, with their amounts (smallest unit). */
export async function overview(q: Queryable, merchantId: string, from: Date): Promise<{ day: string; status: string; token_symbol: string; decimals: number; card: boolean; orders: number; amount_wei: string }[]> {
  const { rows } = await q.query<{ day: string; status: string; token_symbol: string; decimals: number; card: boolean; orders: string | number; amount_wei: string }>(
    `SELECT to_char(date_trunc('day', o.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, o.status, o.token_symbol, o.decimals,
            (o.fiat_currency IS NOT NULL) AS card, count(*) AS orders, sum(o.amount_wei)::text AS amount_wei
       FROM orders o WHERE o.merchant_id = $1 AND o.created_at >= $2
      GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3`,
    [merchantId, from],
  );
  return rows.map((r) => ({ ...r, orders: Number(r.orders) }));
}

export async function listTransitions(q: Queryable, orderId: string): Promise<{ from_status: string | null; to_status: string; trigger: string; created_at: Date }[]> {
  const { rows } = await q.query<{ from_status: string | null; to_status: string; trigger: string; created_at: Date }>('SELECT from_status, to_status, trigger, created_at FROM order_transitions WHERE order_id = $1 ORDER BY id', [orderId]);
  return rows;
}

export interface LedgerRow {
  id: number;
  kind: string;
  from_account: string;
  to_account: string;
  amount: string;
  order_id: string | null;
  created_at: Date;
}

/** Fee ledger rows of a merchant, newest first, paged by id. */
export async function listLedger(q: Queryable, merchantId: string, beforeId: number | undefined, limit: number): Promise<LedgerRow[]> {
  const { rows } = await q.query<LedgerRow>(
    `SELECT id, kind, from_account, to_account, amount::text AS amount, order_id, created_at FROM fee_ledger
      WHERE merchant_id = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [merchantId, beforeId ?? null, limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

export interface ExportRow extends OrderListRow {
  log_index: number | null;
  block_number: number | null;
  confirmed_at: Date | null;
  checkout_id: string | null;
  client_reference_id: string | null;
  line_items: unknown;
  /** card orders: the fiat currency and amount as the session set them */
  fiat_currency?: string | null;
  fiat_amount?: string | null;
  /** card: the processor and its payment reference */
  processor?: string | null;
  payment_reference?: string | null;
  /** base units refunded (succeeded) so far */
  refunded_amount?: string | null;
  payment_seen_at?: Date | null;
  /** quick-pay: the session and the payer's memo */
  quickpay_session_id?: string | null;
  payer_reference?: string | null;
  /** a refund row of payments.csv (docs/refunds.md): the refund's fields; the order's otherwise */
  refund?: { id: string; rail: string; amount: string; status: string; processor_refund_id: string | null; tx_hash: string | null; created_at: Date; completed_at: Date | null } | undefined;
}

/** What every export row reads of its order (LIST_COLUMNS plus the accounting columns). */
const EXPORT_SELECT = `${LIST_COLUMNS}, o.log_index, o.block_number, o.confirmed_at, o.checkout_id, cs.client_reference_id, cs.line_items,
  o.fiat_currency, o.fiat_amount, cp.processor, o.payment_reference, o.refunded_amount::text AS refunded_amount, o.payment_seen_at,
  qs.id AS quickpay_session_id, qs.memo AS payer_reference
  FROM orders o LEFT JOIN checkout_sessions cs ON cs.id = o.checkout_id
  LEFT JOIN card_payments cp ON cp.order_id = o.id
  LEFT JOIN quickpay_sessions qs ON qs.order_id = o.id`;

/**
 * A paid order, every rail (docs/portal.md "Exports"): its payment was seen (a transfer, or a card
 * payment that succeeded) and it is confirmed, invoiced, or failed after payment (a DELEGATE
 * order whose callback failed holds the payer's funds until refunded).
 */
const PAID = `o.payment_seen_at IS NOT NULL AND o.status IN ('PAYMENT_CONFIRMED', 'INVOICED', 'FAILED')`;

/**
 * One page of the orders export: oldest first within [from, to), after (created_us, id). The CSV
 * route pulls pages until one is short, so memory holds one page whatever the range.
 */
export async function exportPage(q: Queryable, merchantId: string, a: { from: Date; to: Date; paidOnly: boolean; after?: { createdUs: string; id: string } | undefined; limit: number }): Promise<ExportRow[]> {
  const params: unknown[] = [merchantId, a.from, a.to, a.limit];
  let keyset = '';
  if (a.after) {
    params.push(a.after.createdUs, a.after.id);
    keyset = `AND (o.created_at, o.id) > ('epoch'::timestamptz + $5::bigint * interval '1 microsecond', $6::text)`;
  }
  const { rows } = await q.query<ExportRow>(
    `SELECT ${EXPORT_SELECT}
      WHERE o.merchant_id = $1 AND o.created_at >= $2 AND o.created_at < $3 ${a.paidOnly ? `AND ${PAID}` : ''} ${keyset}
      ORDER BY o.created_at, o.id LIMIT $4`,
    params,
  );
  return rows;
}

/**
 * One page of the refund rows of payments.csv: the merchant's refunds (every rail, every status)
 * made in [from, to), oldest first, after (created_us, id), each with its order's columns.
 */
export async function exportRefundPage(q: Queryable, merchantId: string, a: { from: Date; to: Date; after?: { createdUs: string; id: string } | undefined; limit: number }): Promise<(ExportRow & { refund_created_us: string })[]> {
  const params: unknown[] = [merchantId, a.from, a.to, a.limit];
  let keyset = '';
  if (a.after) {
    params.push(a.after.createdUs, a.after.id);
    keyset = `AND (r.created_at, r.id) > ('epoch'::timestamptz + $5::bigint * interval '1 microsecond', $6::text)`;
  }
  const { rows } = await q.query<ExportRow & { r_id: string; r_rail: string; r_amount: string; r_status: string; r_processor_refund_id: string | null; r_tx_hash: string | null; r_created_at: Date; r_completed_at: Date | null; refund_created_us: string }>(
    `SELECT ${EXPORT_SELECT.replace(
      'FROM orders o',
      `, r.id AS r_id, r.rail AS r_rail, r.amount::text AS r_amount, r.status AS r_status, r.processor_refund_id AS r_processor_refund_id,
        r.tx_hash AS r_tx_hash, r.created_at AS r_created_at, r.completed_at AS r_completed_at,
        ((extract(epoch FROM r.created_at) * 1000000)::numeric(20,0))::text AS refund_created_us
      FROM refunds r JOIN orders o ON o.id = r.order_id`,
    )}
      WHERE r.merchant_id = $1 AND r.created_at >= $2 AND r.created_at < $3 ${keyset}
      ORDER BY r.created_at, r.id LIMIT $4`,
    params,
  );
  return rows.map(({ r_id, r_rail, r_amount, r_status, r_processor_refund_id, r_tx_hash, r_created_at, r_completed_at, ...o }) => ({
    ...o,
    refund: { id: r_id, rail: r_rail, amount: r_amount, status: r_status, processor_refund_id: r_processor_refund_id, tx_hash: r_tx_hash, created_at: r_created_at, completed_at: r_completed_at },
  }));
}

export interface SessionListRow {
  id: string;
  status: string;
  price: string | null;
  fiat_currency: string | null;
  fiat_amount: string | null;
  client_reference_id: string | null;
  order_id: string | null;
  success_url: string | null;
  cancel_url: string | null;
  expires_at: Date;
  created_at: Date;
}

/** A merchant's checkout sessions, newest first, paged by (created_at, id) of the last one. */
export async function listCheckoutSessions(q: Queryable, merchantId: string, before: string | undefined, limit: number): Promise<SessionListRow[]> {
  const { rows } = await q.query<SessionListRow>(
    `SELECT s.id, s.status, s.price, s.fiat_currency, s.fiat_amount, s.client_reference_id, s.order_id, s.success_url, s.cancel_url, s.expires_at, s.created_at
       FROM checkout_sessions s
      WHERE s.merchant_id = $1
        AND ($2::text IS NULL OR (s.created_at, s.id) < (SELECT b.created_at, b.id FROM checkout_sessions b WHERE b.id = $2 AND b.merchant_id = $1))
      ORDER BY s.created_at DESC, s.id DESC LIMIT $3`,
    [merchantId, before ?? null, limit],
  );
  return rows;
}
