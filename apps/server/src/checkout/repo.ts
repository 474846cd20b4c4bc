import type { Queryable } from '../db/database.ts';
import type { OrderStatus } from '../orders/states.ts';
import type { LineItem, MetadataValue } from './fields.ts';
import type { SessionStatus, SessionTrigger } from './states.ts';
import type { PaymentOption, PaymentRail, SessionDraft } from './validate.ts';

/** A `checkout_sessions` row as the adapters return it (jsonb parsed, timestamptz → Date). */
export interface SessionRow {
  id: string;
  merchant_id: string;
  checkout_type: 'DIRECT';
  status: SessionStatus;
  payment_rails: PaymentRail[];
  price: string | null;
  fiat_currency: string | null;
  fiat_amount: string | null;
  client_reference_id: string | null;
  line_items: LineItem[];
  public_metadata: Record<string, MetadataValue>;
  private_metadata: Record<string, MetadataValue>;
  success_url: string | null;
  cancel_url: string | null;
  payment_options: PaymentOption[];
  order_id: string | null;
  expires_at: Date;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The latest order of a session, as reads and binds need it. */
export interface SessionOrder {
  id: string;
  status: OrderStatus;
  /** ERC20_DIRECT, …, or FIAT_<PROCESSOR> for a card order (rails/card) */
  flow: string;
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  dapp_order_id: string;
  from_address: string;
  pay_to_address: string;
  amount_wei: string;
  expires_at: Date;
  tx_hash: string | null;
  payment_seen: boolean;
}

export interface SessionWithOrder {
  session: SessionRow;
  merchant: { id: string; name: string; logo_url: string | null };
  /** The session's latest order (by creation), whether or not the bind that made it linked it. */
  order: SessionOrder | undefined;
  /** How many orders the session has had: the next bind's sequence number is this + 1. */
  orderCount: number;
}

/**
 * Inserts a session in OPEN with its first audit row, in one statement. A reused
 * client_reference_id throws the unique violation of `checkout_sessions_client_reference_key`
 * (the service maps it to 409); nothing is written then.
 */
export async function insertSession(q: Queryable, id: string, merchantId: string, d: SessionDraft): Promise<SessionRow> {
  const { rows } = await q.query<SessionRow>(
    `WITH s AS (
       INSERT INTO checkout_sessions (id, merchant_id, checkout_type, status, payment_rails, price, fiat_currency, fiat_amount,
         client_reference_id, line_items, public_metadata, private_metadata, success_url, cancel_url, payment_options, expires_at)
       VALUES ($1, $2, $3, 'OPEN', $4::jsonb, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11::jsonb, $12, $13, $14::jsonb, $15)
       RETURNING *
     ), tr AS (
       INSERT INTO checkout_transitions (checkout_id, from_status, to_status, trigger) SELECT id, NULL, 'OPEN', 'create' FROM s
     )
     SELECT * FROM s`,
    [
      id,
      merchantId,
      d.checkoutType,
      JSON.stringify(d.paymentRails),
      d.price ?? null,
      d.fiatCurrency ?? null,
      d.fiatAmount ?? null,
      d.clientReferenceId ?? null,
      JSON.stringify(d.lineItems),
      JSON.stringify(d.publicMetadata),
      JSON.stringify(d.privateMetadata),
      d.successUrl ?? null,
      d.cancelUrl ?? null,
      JSON.stringify(d.paymentOptions),
      d.expiresAt,
    ],
  );
  return rows[0]!;
}

type JoinedRow = SessionRow & {
  m_name: string;
  m_logo_url: string | null;
  o_id: string | null;
  o_status: OrderStatus | null;
  o_flow: string | null;
  o_chain_id: number | null;
  o_token_symbol: string | null;
  o_token_contract: string | null;
  o_dapp_order_id: string | null;
  o_from_address: string | null;
  o_pay_to_address: string | null;
  o_amount_wei: string | null;
  o_expires_at: Date | null;
  o_tx_hash: string | null;
  o_payment_seen: boolean | null;
  order_count: number;
};

/**
 * A session with its merchant's public name and its latest order, in one round trip: public reads
 * are the hot path (a hosted page polls the status).
 */
export async function getSessionWithOrder(q: Queryable, id: string): Promise<SessionWithOrder | undefined> {
  const { rows } = await q.query<JoinedRow>(
    `SELECT s.*, m.name AS m_name, m.logo_url AS m_logo_url,
       o.id AS o_id, o.status AS o_status, o.flow AS o_flow, o.chain_id AS o_chain_id, o.token_symbol AS o_token_symbol,
       o.token_contract AS o_token_contract, o.dapp_order_id AS o_dapp_order_id, o.from_address AS o_from_address, o.pay_to_address AS o_pay_to_address,
       o.amount_wei::text AS o_amount_wei, o.expires_at AS o_expires_at, o.tx_hash AS o_tx_hash,
       -- a card order's payment is under way once the processor reported it (rails/card)
       (o.transfer_id IS NOT NULL OR (o.chain_id = 0 AND o.payment_seen_at IS NOT NULL)) AS o_payment_seen,
       (SELECT count(*) FROM orders c WHERE c.checkout_id = s.id)::int AS order_count
     FROM checkout_sessions s
     JOIN merchants m ON m.id = s.merchant_id
     LEFT JOIN LATERAL (
       SELECT * FROM orders x WHERE x.checkout_id = s.id ORDER BY x.created_at DESC, x.id DESC LIMIT 1
     ) o ON true
     WHERE s.id = $1`,
    [id],
  );
  const r = rows[0];
  if (!r) return undefined;
  const { m_name, m_logo_url, o_id, o_status, o_flow, o_chain_id, o_token_symbol, o_token_contract, o_dapp_order_id, o_from_address, o_pay_to_address, o_amount_wei, o_expires_at, o_tx_hash, o_payment_seen, order_count, ...session } = r;
  return {
    session,
    merchant: { id: session.merchant_id, name: m_name, logo_url: m_logo_url },
    order:
      o_id === null
        ? undefined
        : {
            id: o_id,
            status: o_status!,
            flow: o_flow!,
            chain_id: o_chain_id!,
            token_symbol: o_token_symbol!,
            token_contract: o_token_contract!,
            dapp_order_id: o_dapp_order_id!,
            from_address: o_from_address!,
            pay_to_address: o_pay_to_address!,
            amount_wei: o_amount_wei!,
            expires_at: o_expires_at!,
            tx_hash: o_tx_hash,
            payment_seen: o_payment_seen === true,
          },
    orderCount: order_count,
  };
}

/** Columns a session transition may set besides status (whitelist: names are interpolated). */
const PATCHABLE = ['order_id', 'completed_at'] as const;
export type SessionPatch = Partial<Record<(typeof PATCHABLE)[number], unknown>>;

/**
 * `UPDATE … WHERE id = $1 AND status = ANY($sources)`: the move happens only from a state the
 * caller allows, so two processes can never both apply it; the audit row records the status it
 * actually left. Returns the updated row and that status, or undefined when the session was in
 * none of `sources` (or does not exist).
 */
export async function updateSessionStatus(
  q: Queryable,
  a: { id: string; sources: SessionStatus[]; to: SessionStatus; trigger: SessionTrigger; patch?: SessionPatch; orderId?: string | undefined; detail?: unknown },
): Promise<{ row: SessionRow; from: SessionStatus } | undefined> {
  const sets = ['status = $3', 'updated_at = now()'];
  const params: unknown[] = [a.id, a.sources, a.to, a.trigger, a.orderId ?? null, a.detail === undefined ? null : JSON.stringify(a.detail)];
  for (const [col, val] of Object.entries(a.patch ?? {})) {
    if (!(PATCHABLE as readonly string[]).includes(col)) throw new Error(`column ${col} is not patchable`);
    params.push(val);
    sets.push(`${col} = $${params.length}`);
  }
  const { rows } = await q.query<SessionRow & { from_status: SessionStatus }>(
    `WITH old AS (
       SELECT id, status FROM checkout_sessions WHERE id = $1 AND status = ANY ($2::text[]) FOR UPDATE
     ), upd AS (
       UPDATE checkout_sessions s SET ${sets.join(', ')} FROM old WHERE s.id = old.id
       RETURNING s.*, old.status AS from_status
     ), tr AS (
       INSERT INTO checkout_transitions (checkout_id, from_status, to_status, trigger, order_id, detail)
       SELECT id, from_status, $3, $4, $5, $6::jsonb FROM upd
     )
     SELECT * FROM upd`,
    params,
  );
  const r = rows[0];
  if (!r) return undefined;
  const { from_status, ...row } = r;
  return { row, from: from_status };
}

/**
 * Sessions the sweeper should expire now: past `expires_at` and OPEN, or BOUND to an order with no
 * payment seen (live and unpaid, or already expired/cancelled). Mirrors `states.isExpiredAt`.
 * A BOUND session whose order's payment was seen is skipped: it follows the order.
 */
export async function listExpirableSessions(q: Queryable, now: Date, limit: number): Promise<{ id: string }[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT s.id FROM checkout_sessions s
     LEFT JOIN orders o ON o.id = s.order_id
     WHERE s.status IN ('OPEN', 'BOUND') AND s.expires_at <= $1
       AND (o.id IS NULL
            OR (s.status = 'OPEN' AND o.payment_seen_at IS NULL)
            OR (s.status = 'BOUND' AND o.transfer_id IS NULL AND o.status IN ('CHECKOUT_VERIFIED', 'EXPIRED', 'CANCELLED')))
     ORDER BY s.expires_at LIMIT $2`,
    [now, limit],
  );
  return rows;
}

/**
 * Links a card order to a session without a status change: a card session need not pass through
 * BOUND (docs/card-payments.md) and stays OPEN while its payment is processing or held (rails/card).
 */
export async function linkCardOrder(q: Queryable, id: string, orderId: string): Promise<void> {
  await q.query('UPDATE checkout_sessions SET order_id = $2, updated_at = now() WHERE id = $1', [id, orderId]);
}

/** Locks a session row for the rest of the caller's transaction. */
export async function lockSession(q: Queryable, id: string): Promise<SessionRow | undefined> {
  const { rows } = await q.query<SessionRow>('SELECT * FROM checkout_sessions WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

/** Status and payment evidence of one order (the bind link re-checks the order it replaces). */
export async function getOrderFacts(q: Queryable, orderId: string): Promise<{ status: OrderStatus; payment_seen: boolean } | undefined> {
  const { rows } = await q.query<{ status: OrderStatus; payment_seen: boolean }>(
    // Same evidence as the session read (a card payment under way counts: chain_id 0, payment_seen_at).
    'SELECT status, (transfer_id IS NOT NULL OR (chain_id = 0 AND payment_seen_at IS NOT NULL)) AS payment_seen FROM orders WHERE id = $1',
    [orderId],
  );
  return rows[0];
}
