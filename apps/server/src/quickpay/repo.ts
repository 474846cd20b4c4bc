import type { Queryable } from '../db/database.ts';
import type { OrderStatus } from '../orders/states.ts';
import type { LinkDraft, ProductDraft, QuickPayRailName } from './validate.ts';

/** SQL of hosted quick-pay: products, payment links, sessions (migration 0010_quickpay). */

export interface ProductRow extends ProductDraft {
  id: string;
  merchant_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface LinkRow extends LinkDraft {
  id: string;
  merchant_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface SessionRow {
  id: string;
  link_id: string;
  merchant_id: string;
  product_id: string | null;
  rail: QuickPayRailName;
  amount: string;
  memo: string | null;
  idempotency_key: string | null;
  request_hash: string;
  chain_id: number | null;
  token_symbol: string | null;
  from_address: string | null;
  order_id: string | null;
  checkout_id: string | null;
  /** keyed hash of the client address that opened it (quickpay/holds.ts), on limited links */
  holder: string | null;
  expires_at: Date;
  completed_at: Date | null;
  created_at: Date;
}

/** The facts of a session's order that its status and terms are made of. */
interface SessionOrder {
  id: string;
  status: OrderStatus;
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
  pay_to_address: string;
  amount_wei: string;
  paid_amount_wei: string | null;
  expires_at: Date;
  tx_hash: string | null;
  /**
   * A payment is under way: a transfer matched (crypto), or the processor has the card payment
   * (processing or succeeded; cleared on a decline). Keeps the session open past its window.
   */
  payment_seen: boolean;
  /** DIRECT, …, or FIAT_<PROCESSOR> for a card order */
  flow: string;
  /** a card order's payment (card_payments): its state and the processor's page, if it has one */
  card: { state: string; redirect_url: string | null } | undefined;
}

export interface SessionWithOrder {
  session: SessionRow;
  order: SessionOrder | undefined;
}

// ---- products

export async function insertProduct(q: Queryable, id: string, merchantId: string, d: ProductDraft): Promise<ProductRow> {
  const { rows } = await q.query<ProductRow>(
    `INSERT INTO quickpay_products (id, merchant_id, name, description, image_url, price, fiat_currency, fiat_amount, inventory, active)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [id, merchantId, d.name, d.description, d.image_url, d.price, d.fiat_currency, d.fiat_amount, d.inventory, d.active],
  );
  return rows[0]!;
}

export async function updateProduct(q: Queryable, id: string, merchantId: string, d: ProductDraft): Promise<ProductRow | undefined> {
  const { rows } = await q.query<ProductRow>(
    `UPDATE quickpay_products SET name = $3, description = $4, image_url = $5, price = $6, fiat_currency = $7, fiat_amount = $8,
       inventory = $9, active = $10, updated_at = now()
     WHERE id = $1 AND merchant_id = $2 RETURNING *`,
    [id, merchantId, d.name, d.description, d.image_url, d.price, d.fiat_currency, d.fiat_amount, d.inventory, d.active],
  );
  return rows[0];
}

export async function getProduct(q: Queryable, id: string, merchantId?: string): Promise<ProductRow | undefined> {
  const { rows } = await q.query<ProductRow>(merchantId === undefined ? 'SELECT * FROM quickpay_products WHERE id = $1' : 'SELECT * FROM quickpay_products WHERE id = $1 AND merchant_id = $2', merchantId === undefined ? [id] : [id, merchantId]);
  return rows[0];
}

export async function listProducts(q: Queryable, merchantId: string, limit: number): Promise<ProductRow[]> {
  const { rows } = await q.query<ProductRow>('SELECT * FROM quickpay_products WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [merchantId, limit]);
  return rows;
}

// ---- links

export async function insertLink(q: Queryable, id: string, merchantId: string, d: LinkDraft): Promise<LinkRow> {
  const { rows } = await q.query<LinkRow>(
    `INSERT INTO quickpay_links (id, merchant_id, product_id, min_amount, max_amount, payment_rails, options, max_payments, expires_at, active)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10) RETURNING *`,
    [id, merchantId, d.product_id, d.min_amount, d.max_amount, JSON.stringify(d.payment_rails), JSON.stringify(d.options), d.max_payments, d.expires_at, d.active],
  );
  return rows[0]!;
}

/** Updates the mutable part of a link (limits, expiry, activity). */
export async function updateLink(q: Queryable, id: string, merchantId: string, d: Pick<LinkDraft, 'max_payments' | 'expires_at' | 'active'>): Promise<LinkRow | undefined> {
  const { rows } = await q.query<LinkRow>('UPDATE quickpay_links SET max_payments = $3, expires_at = $4, active = $5, updated_at = now() WHERE id = $1 AND merchant_id = $2 RETURNING *', [id, merchantId, d.max_payments, d.expires_at, d.active]);
  return rows[0];
}

export async function getLink(q: Queryable, id: string, merchantId?: string): Promise<LinkRow | undefined> {
  const { rows } = await q.query<LinkRow>(merchantId === undefined ? 'SELECT * FROM quickpay_links WHERE id = $1' : 'SELECT * FROM quickpay_links WHERE id = $1 AND merchant_id = $2', merchantId === undefined ? [id] : [id, merchantId]);
  return rows[0];
}

/** A link with its product and the merchant's public face, in one round trip (public reads). */
export async function getPublicLink(q: Queryable, id: string): Promise<{ link: LinkRow; product: ProductRow | undefined; merchant: { id: string; name: string; logo_url: string | null } } | undefined> {
  const { rows } = await q.query<LinkRow & { m_name: string; m_logo_url: string | null; p: ProductRow | null }>(
    `SELECT l.*, m.name AS m_name, m.logo_url AS m_logo_url, to_jsonb(p.*) AS p
     FROM quickpay_links l JOIN merchants m ON m.id = l.merchant_id LEFT JOIN quickpay_products p ON p.id = l.product_id
     WHERE l.id = $1`,
    [id],
  );
  const r = rows[0];
  if (!r) return undefined;
  const { m_name, m_logo_url, p, ...link } = r;
  return { link, product: p ?? undefined, merchant: { id: link.merchant_id, name: m_name, logo_url: m_logo_url } };
}

export async function listLinks(q: Queryable, merchantId: string, limit: number): Promise<LinkRow[]> {
  const { rows } = await q.query<LinkRow>('SELECT * FROM quickpay_links WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [merchantId, limit]);
  return rows;
}

export async function lockLink(q: Queryable, id: string): Promise<LinkRow | undefined> {
  const { rows } = await q.query<LinkRow>('SELECT * FROM quickpay_links WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

export async function lockProduct(q: Queryable, id: string): Promise<ProductRow | undefined> {
  const { rows } = await q.query<ProductRow>('SELECT * FROM quickpay_products WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

/**
 * Sessions that hold a slot of a limit: paid (order PAYMENT_CONFIRMED / INVOICED), still payable
 * (order CHECKOUT_VERIFIED), or not yet given their order (creation in flight) and not expired.
 * A crypto session whose window (its hold, quickpay/holds.ts) has passed with nothing seen holds
 * nothing even before the sweeper expires its order; a card order keeps its slot until it leaves
 * CHECKOUT_VERIFIED (a payment the processor is still processing may succeed past the window).
 * `by` picks the link's sessions (max_payments) or the product's across links (inventory).
 */
export async function countHeldSessions(q: Queryable, by: { linkId: string } | { productId: string }, now: Date, returning?: ReturningPayer): Promise<number> {
  const [col, val] = 'linkId' in by ? ['s.link_id', by.linkId] : ['s.product_id', by.productId];
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM quickpay_sessions s LEFT JOIN orders o ON o.id = s.order_id
     WHERE ${col} = $1 AND (
       (s.order_id IS NULL AND s.checkout_id IS NULL AND s.expires_at > $2)
       OR o.status IN ('PAYMENT_CONFIRMED', 'INVOICED')
       OR (o.status = 'CHECKOUT_VERIFIED' AND (s.rail <> 'crypto' OR o.expires_at > $2 OR ${SEEN}) ${returning ? `AND NOT ${mine(3)}` : ''}))`,
    returning ? [val, now, returning.fromAddress, returning.chainId, returning.tokenSymbol, returning.amount] : [val, now],
  );
  return rows[0]!.n;
}

// A payment is under way for the order: seen, attributed, or a transfer recorded against it.
const SEEN = `(o.transfer_id IS NOT NULL OR o.payment_seen_at IS NOT NULL OR EXISTS (SELECT 1 FROM chain_transfers t WHERE t.order_id = o.id AND t.orphaned_at IS NULL))`;
// A returning payer's own unpaid session with the same terms holds no slot against them: their
// new session's order supersedes it (orders/supersede.ts), which frees that slot. Parameters
// $n..$n+3: the returning payer's address, chain id, token symbol and amount.
const mine = (n: number) => `(o.from_address = $${n} AND o.chain_id = $${n + 1} AND o.token_symbol = $${n + 2} AND s.amount::numeric = $${n + 3}::numeric AND NOT ${SEEN})`;

/**
 * Unpaid sessions one holder (quickpay/holds.ts) holds now on a link, or on any link of a product:
 * not yet given an order and not expired, or an order CHECKOUT_VERIFIED inside its window with no
 * payment under way. The returning payer's own session (superseded by the new one) is left out.
 */
export async function countUnpaidHolds(q: Queryable, holder: string, by: { linkId: string; productId: string | null }, now: Date, returning?: ReturningPayer): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM quickpay_sessions s LEFT JOIN orders o ON o.id = s.order_id
     WHERE s.holder = $1 AND (s.link_id = $2 OR s.product_id = $3) AND s.expires_at > $4 AND (
       (s.order_id IS NULL AND s.checkout_id IS NULL)
       OR (o.status = 'CHECKOUT_VERIFIED' AND o.expires_at > $4 AND NOT ${SEEN} ${returning ? `AND NOT ${mine(5)}` : ''}))`,
    [holder, by.linkId, by.productId, now, ...(returning ? [returning.fromAddress, returning.chainId, returning.tokenSymbol, returning.amount] : [])],
  );
  return rows[0]!.n;
}

/** The terms a payer opens a session with (the crypto rail's choice and the amount). */
export interface ReturningPayer {
  fromAddress: string;
  chainId: number;
  tokenSymbol: string;
  /** decimal string */
  amount: string;
}

// ---- sessions

export interface SessionInsert {
  id: string;
  linkId: string;
  merchantId: string;
  productId: string | null;
  rail: QuickPayRailName;
  amount: string;
  memo: string | null;
  idempotencyKey: string | null;
  requestHash: string;
  chainId: number | null;
  tokenSymbol: string | null;
  fromAddress: string | null;
  holder: string | null;
  expiresAt: Date;
}

/** Inserts a session; a reused idempotency key throws the unique violation of `quickpay_sessions_idempotency_key`. */
export async function insertSession(q: Queryable, s: SessionInsert): Promise<SessionRow> {
  const { rows } = await q.query<SessionRow>(
    `INSERT INTO quickpay_sessions (id, link_id, merchant_id, product_id, rail, amount, memo, idempotency_key, request_hash, chain_id, token_symbol, from_address, holder, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
    [s.id, s.linkId, s.merchantId, s.productId, s.rail, s.amount, s.memo, s.idempotencyKey, s.requestHash, s.chainId, s.tokenSymbol, s.fromAddress, s.holder, s.expiresAt],
  );
  return rows[0]!;
}

export async function setSessionOrder(q: Queryable, id: string, orderId: string, expiresAt: Date): Promise<void> {
  await q.query('UPDATE quickpay_sessions SET order_id = $2, expires_at = $3 WHERE id = $1 AND order_id IS NULL', [id, orderId, expiresAt]);
}

/** A session whose order could not be created never became payable: it is removed. */
export async function deleteOrderlessSession(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM quickpay_sessions WHERE id = $1 AND order_id IS NULL AND checkout_id IS NULL', [id]);
}

const SESSION_SELECT = `SELECT s.*,
   o.id AS o_id, o.status AS o_status, o.chain_id AS o_chain_id, o.token_symbol AS o_token_symbol, o.token_contract AS o_token_contract,
   o.decimals AS o_decimals, o.pay_to_address AS o_pay_to_address, o.amount_wei::text AS o_amount_wei, o.paid_amount_wei::text AS o_paid_amount_wei,
   o.expires_at AS o_expires_at, o.tx_hash AS o_tx_hash, o.flow AS o_flow,
   (o.transfer_id IS NOT NULL OR (cp.order_id IS NOT NULL AND o.payment_seen_at IS NOT NULL)) AS o_payment_seen,
   cp.state AS cp_state, cp.redirect_url AS cp_redirect_url
 FROM quickpay_sessions s LEFT JOIN orders o ON o.id = s.order_id LEFT JOIN card_payments cp ON cp.order_id = o.id`;

type Joined = SessionRow & {
  o_id: string | null;
  o_status: OrderStatus | null;
  o_chain_id: number | null;
  o_token_symbol: string | null;
  o_token_contract: string | null;
  o_decimals: number | null;
  o_pay_to_address: string | null;
  o_amount_wei: string | null;
  o_paid_amount_wei: string | null;
  o_expires_at: Date | null;
  o_tx_hash: string | null;
  o_payment_seen: boolean | null;
  o_flow: string | null;
  cp_state: string | null;
  cp_redirect_url: string | null;
};

function split(r: Joined): SessionWithOrder {
  const { o_id, o_status, o_chain_id, o_token_symbol, o_token_contract, o_decimals, o_pay_to_address, o_amount_wei, o_paid_amount_wei, o_expires_at, o_tx_hash, o_payment_seen, o_flow, cp_state, cp_redirect_url, ...session } = r;
  return {
    session,
    order:
      o_id === null
        ? undefined
        : {
            id: o_id,
            status: o_status!,
            chain_id: o_chain_id!,
            token_symbol: o_token_symbol!,
            token_contract: o_token_contract!,
            decimals: o_decimals!,
            pay_to_address: o_pay_to_address!,
            amount_wei: o_amount_wei!,
            paid_amount_wei: o_paid_amount_wei,
            expires_at: o_expires_at!,
            tx_hash: o_tx_hash,
            payment_seen: o_payment_seen === true,
            flow: o_flow!,
            card: cp_state === null ? undefined : { state: cp_state, redirect_url: cp_redirect_url },
          },
  };
}

export async function getSession(q: Queryable, id: string): Promise<SessionWithOrder | undefined> {
  const { rows } = await q.query<Joined>(`${SESSION_SELECT} WHERE s.id = $1`, [id]);
  return rows[0] && split(rows[0]);
}

export async function getSessionByKey(q: Queryable, linkId: string, key: string): Promise<SessionWithOrder | undefined> {
  const { rows } = await q.query<Joined>(`${SESSION_SELECT} WHERE s.link_id = $1 AND s.idempotency_key = $2`, [linkId, key]);
  return rows[0] && split(rows[0]);
}

/**
 * The payer's newest session on a link that is still waiting for its payment with these terms
 * (order CHECKOUT_VERIFIED, its window open): what a retry without an idempotency key gets back
 * through GOAT's quick-pay wire (quickpay/goat/sessions.ts), so a re-run never pays twice.
 */
export async function findLiveSession(q: Queryable, linkId: string, t: ReturningPayer, now: Date): Promise<SessionWithOrder | undefined> {
  const { rows } = await q.query<Joined>(
    `${SESSION_SELECT} WHERE s.link_id = $1 AND s.rail = 'crypto' AND s.from_address = $2 AND s.chain_id = $3 AND s.token_symbol = $4
       AND s.amount::numeric = $5::numeric AND o.status = 'CHECKOUT_VERIFIED' AND o.expires_at > $6
     ORDER BY s.created_at DESC, s.id DESC LIMIT 1`,
    [linkId, t.fromAddress, t.chainId, t.tokenSymbol, t.amount, now],
  );
  return rows[0] && split(rows[0]);
}

/** A link's sessions with their orders, newest first (merchant records). */
export async function listLinkSessions(q: Queryable, linkId: string, limit: number): Promise<SessionWithOrder[]> {
  const { rows } = await q.query<Joined>(`${SESSION_SELECT} WHERE s.link_id = $1 ORDER BY s.created_at DESC, s.id DESC LIMIT $2`, [linkId, limit]);
  return rows.map(split);
}

/** Marks a session completed once; true only for the call that did it (the completion event is sent once). */
export async function markCompleted(q: Queryable, id: string, orderId: string, merchantId: string, at: Date): Promise<SessionRow | undefined> {
  // order_id may still be NULL when the process stopped between creating the order and linking it.
  const { rows } = await q.query<SessionRow>(
    `UPDATE quickpay_sessions SET completed_at = $2, order_id = $3
     WHERE id = $1 AND merchant_id = $4 AND completed_at IS NULL AND (order_id IS NULL OR order_id = $3) RETURNING *`,
    [id, at, orderId, merchantId],
  );
  return rows[0];
}

/**
 * Crypto sessions whose order is not paid by one transfer but whose recorded, not yet accepted
 * short payments (underpaid, late; not orphaned) add up to its amount: the partial-payment
 * worker's batch (quickpay/partial.ts re-checks each under the order's lock). Sessions older
 * than `since` are left alone: attribution records late payments for 7 days only.
 */
export async function listSummableSessions(q: Queryable, since: Date, limit: number): Promise<{ session_id: string; order_id: string; merchant_id: string; chain_id: number }[]> {
  const { rows } = await q.query<{ session_id: string; order_id: string; merchant_id: string; chain_id: number }>(
    `SELECT s.id AS session_id, o.id AS order_id, o.merchant_id, o.chain_id
     FROM quickpay_sessions s JOIN orders o ON o.id = s.order_id
     WHERE s.completed_at IS NULL AND s.rail = 'crypto' AND s.created_at > $1
       AND o.transfer_id IS NULL AND o.status IN ('CHECKOUT_VERIFIED', 'EXPIRED', 'CANCELLED')
       AND (SELECT coalesce(sum(t.amount_wei), 0) FROM chain_transfers t
            WHERE t.order_id = o.id AND t.match_status IN ('late', 'underpaid') AND t.orphaned_at IS NULL AND t.accepted_at IS NULL) >= o.amount_wei
     ORDER BY s.created_at LIMIT $2`,
    [since, limit],
  );
  return rows;
}
