import type { Queryable } from '../db/database.ts';
import type { OrderStatus } from './states.ts';

/** An `orders` row as the adapters return it (numeric → string, int8 → number). */
export interface OrderRow {
  id: string;
  merchant_id: string;
  dapp_order_id: string;
  flow: string;
  chain_id: number;
  pay_to_chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
  from_address: string;
  pay_to_address: string;
  amount_wei: string;
  fee_amount: string;
  status: OrderStatus;
  expires_at: Date;
  callback_calldata: string | null;
  checkout_id: string | null;
  transfer_id: number | null;
  tx_hash: string | null;
  log_index: number | null;
  block_number: number | null;
  block_hash: string | null;
  paid_amount_wei: string | null;
  confirmations: number | null;
  payment_seen_at: Date | null;
  confirmed_at: Date | null;
  invoiced_at: Date | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
  /** Base units refunded so far (succeeded refunds of any rail, docs/refunds.md); a card order counts minor units of its currency. */
  refunded_amount?: string | null;
  /** The callback registration the order settles through (OrderPlan.callbackId); null otherwise. */
  callback_id: string | null;
  /**
   * The outbound settlement transaction of an order that is settled by the gateway (rather than paid
   * to the merchant's wallet directly): once recorded, the order's settlement is in flight, so it is
   * neither expired, cancelled nor superseded. Null otherwise.
   */
  settlement_tx_hash: string | null;
  // `SELECT *` also returns the columns the modules built on orders own (their OrderRowPart): they
  // read them with their own row type, e.g. rails/card/columns.ts CardOrderColumns.
}

export interface NewOrder {
  id: string;
  merchantId: string;
  dappOrderId: string;
  flow: string;
  chainId: number;
  payToChainId: number;
  tokenSymbol: string;
  tokenContract: string;
  decimals: number;
  fromAddress: string;
  payToAddress: string;
  amountWei: bigint;
  feeAmount: bigint;
  expiresAt: Date;
  callbackCalldata?: string | undefined;
  checkoutId?: string | undefined;
}

/**
 * One order to create; the pay-to address comes from the merchant's wallet for (chain, token).
 * `nonce`: the signed request's nonce, consumed by the same statement (merchant API); absent for
 * orders made by a checkout bind.
 */
export type OrderToCreate = Omit<NewOrder, 'payToAddress'> & {
  nonce?: { apiKey: string; nonce: string } | undefined;
  /** DELEGATE: the settlement contract instead of the merchant wallet (which must still exist: plain settlements pay it). */
  payToAddress?: string | undefined;
  /** DELEGATE: the callback registration the order settles to. */
  callbackId?: string | undefined;
};

/**
 * A freshly created order: the columns its 402 terms and a checkout bind need. Built from the
 * input plus what the statement decided (the pay-to address); not the whole row, because reading
 * ~30 columns back (timestamps and numerics parsed per row) cost more than the insert's own work.
 */
export type CreatedOrder = Pick<
  OrderRow,
  'id' | 'merchant_id' | 'dapp_order_id' | 'flow' | 'chain_id' | 'pay_to_chain_id' | 'token_symbol' | 'token_contract' | 'decimals' | 'from_address' | 'pay_to_address' | 'amount_wei' | 'fee_amount' | 'status' | 'expires_at' | 'checkout_id'
>;

/** Per input order, in input order: the created order, or why there is none. */
export type CreateRowOutcome = { order: CreatedOrder } | { missing: 'nonce_used' | 'key_revoked' | 'wallet' | 'fee_account' | 'fee_short' | 'conflict' };

/** The CHECK that refuses a fee reservation larger than the available balance. */
export const FEE_AVAILABLE_CHECK = 'fee_accounts_available_check';

/**
 * Creates a batch of orders — of any merchants — in ONE statement (autocommit): consumes each
 * request's nonce (refusing a used one or a revoked key, as merchants/repo.ts `insertNonces`
 * does), looks up each merchant's wallet for the (chain, token), inserts the orders, reserves
 * their fees (one `fee_accounts` UPDATE per merchant by the sum, one `fee_ledger` row per order —
 * the move of fees/ledger.ts `reserveFee`) and writes each order's first audit row. The nonce is
 * consumed even when its order is not created (a duplicate, no wallet), like any authenticated
 * request's.
 *
 * Why one statement for many orders: every order of a merchant updates the same `fee_accounts`
 * row, so its row lock serializes that merchant's order creation — held for one execution plus
 * the commit. As one transaction per order (six round trips) that was 381 creates/s, as one
 * statement per order 660/s; one statement per batch of concurrent requests amortizes the lock,
 * the commit and the per-statement cost over the batch (orders/create-batch.ts, BENCHMARKS.md).
 *
 * - A duplicate `(merchant_id, dapp_order_id)` or identical live terms is skipped
 *   (`ON CONFLICT DO NOTHING`), never failing the others: `{ missing: 'conflict' }`.
 * - A merchant whose available balance (read before locking) does not cover all its orders of the
 *   batch gets none created: `{ missing: 'fee_short' }` (nonces consumed); the caller retries
 *   those alone, so the balance goes exactly as far as it reaches.
 * - Fee rows are locked last (after every insert, so a concurrent batch waits for a commit, not
 *   for work) and in merchant-id order, so two batches never deadlock on them. A balance spent by
 *   a concurrent batch between the read and the lock fails the whole statement with a check
 *   violation on FEE_AVAILABLE_CHECK, which changes nothing (no nonce consumed either).
 * - (api_key, nonce) pairs must be distinct within a batch (the caller dedupes).
 *
 * The batch travels as one jsonb parameter, not as arrays: with `unnest($n::text[])` the planner
 * sees each batch's length, judges a custom plan cheaper than the generic one and re-plans the
 * prepared statement on every execution (~0.5 ms of a 0.7–1.6 ms statement, measured on
 * Postgres 15); `jsonb_to_recordset` looks alike to both, so the generic plan is kept.
 */
export async function insertOrdersReservingFee(q: Queryable, os: readonly OrderToCreate[]): Promise<CreateRowOutcome[]> {
  const { rows } = await q.query<{ pay_to_address: string | null; nonce_ok: boolean; key_active: boolean; wallet_found: boolean; fee_account: boolean; fee_ok: boolean }>(
    `WITH input AS (
       SELECT * FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (id text, merchant_id text, dapp_order_id text, flow text, chain_id int,
         pay_to_chain_id int, token_symbol text, token_contract text, decimals int, from_address text, amount_wei numeric, fee_amount numeric,
         expires_at timestamptz, callback_calldata text, checkout_id text, api_key text, nonce text, pay_to_override text, callback_id text))
       WITH ORDINALITY AS u(id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals, from_address,
         amount_wei, fee_amount, expires_at, callback_calldata, checkout_id, api_key, nonce, pay_to_override, callback_id, ord)
     ), nonce AS (
       INSERT INTO request_nonces (api_key, nonce)
       SELECT i.api_key, i.nonce FROM input i JOIN api_keys k ON k.api_key = i.api_key AND k.revoked_at IS NULL
       WHERE i.nonce IS NOT NULL
       ORDER BY i.api_key, i.nonce
       ON CONFLICT DO NOTHING
       RETURNING api_key, nonce
     ), checked AS (
       -- A join, not a correlated EXISTS: that rescanned the nonce CTE once per order. The pairs are
       -- distinct (create-batch.ts drops in-batch replays), so the join never multiplies a row.
       SELECT i.*, i.nonce IS NULL OR n.nonce IS NOT NULL AS nonce_ok
       FROM input i LEFT JOIN nonce n ON n.api_key = i.api_key AND n.nonce = i.nonce
     ), w AS (
       SELECT c.*, coalesce(c.pay_to_override, mw.address) AS pay_to_address FROM checked c
       JOIN merchant_wallets mw ON mw.merchant_id = c.merchant_id AND mw.chain_id = c.chain_id AND mw.token_symbol = c.token_symbol
       WHERE c.nonce_ok
     ), ok AS (
       -- Merchants whose balance covers all their orders of the batch (read unlocked: see fee).
       SELECT f.merchant_id FROM fee_accounts f
       JOIN (SELECT merchant_id, sum(fee_amount) AS total FROM w GROUP BY merchant_id) need ON need.merchant_id = f.merchant_id
       WHERE f.available >= need.total
     ), ins AS (
       INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
         from_address, pay_to_address, amount_wei, fee_amount, status, expires_at, callback_calldata, checkout_id, callback_id)
       SELECT id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
         from_address, pay_to_address, amount_wei, fee_amount, 'CHECKOUT_VERIFIED', expires_at, callback_calldata, checkout_id, callback_id
       FROM w WHERE merchant_id IN (SELECT merchant_id FROM ok) ORDER BY ord
       ON CONFLICT DO NOTHING
       RETURNING id, merchant_id, fee_amount, pay_to_address
     ), led AS (
       INSERT INTO fee_ledger (merchant_id, kind, from_account, to_account, amount, order_id)
       SELECT merchant_id, 'reserve', 'available', 'reserved', fee_amount, id FROM ins WHERE fee_amount > 0
       RETURNING 1
     ), tr AS (
       INSERT INTO order_transitions (order_id, from_status, to_status, trigger)
       SELECT id, NULL, 'CHECKOUT_VERIFIED', 'create' FROM ins
       RETURNING 1
     ), lk AS (
       SELECT merchant_id FROM fee_accounts WHERE merchant_id IN (SELECT merchant_id FROM ins) ORDER BY merchant_id FOR UPDATE
     ), fee AS (
       -- Reads led, tr and lk, so it runs after every insert and after locking the fee rows in
       -- merchant-id order (two batches never wait on each other's rows in opposite orders).
       UPDATE fee_accounts f SET available = f.available - s.total, reserved = f.reserved + s.total
       FROM (SELECT merchant_id, sum(fee_amount) AS total FROM ins GROUP BY merchant_id) s,
         (SELECT count(*) FROM led) l, (SELECT count(*) FROM tr) t, (SELECT count(*) FROM lk) k
       WHERE f.merchant_id = s.merchant_id AND s.total > 0
     )
     -- The why-not columns are only probed for orders not created (CASE short-circuits).
     SELECT ins.pay_to_address, c.nonce_ok,
       CASE WHEN c.nonce_ok THEN true ELSE EXISTS (SELECT 1 FROM api_keys k WHERE k.api_key = c.api_key AND k.revoked_at IS NULL) END AS key_active,
       CASE WHEN ins.id IS NOT NULL THEN true ELSE EXISTS (
         SELECT 1 FROM merchant_wallets mw WHERE mw.merchant_id = c.merchant_id AND mw.chain_id = c.chain_id AND mw.token_symbol = c.token_symbol) END AS wallet_found,
       CASE WHEN ins.id IS NOT NULL THEN true ELSE EXISTS (SELECT 1 FROM fee_accounts f WHERE f.merchant_id = c.merchant_id) END AS fee_account,
       CASE WHEN ins.id IS NOT NULL THEN true ELSE c.merchant_id IN (SELECT merchant_id FROM ok) END AS fee_ok
     FROM checked c LEFT JOIN ins ON ins.id = c.id
     ORDER BY c.ord`,
    [
      JSON.stringify(
        os.map((o) => ({
          id: o.id,
          merchant_id: o.merchantId,
          dapp_order_id: o.dappOrderId,
          flow: o.flow,
          chain_id: o.chainId,
          pay_to_chain_id: o.payToChainId,
          token_symbol: o.tokenSymbol,
          token_contract: o.tokenContract,
          decimals: o.decimals,
          from_address: o.fromAddress,
          amount_wei: o.amountWei.toString(),
          fee_amount: o.feeAmount.toString(),
          expires_at: o.expiresAt.toISOString(),
          callback_calldata: o.callbackCalldata ?? null,
          checkout_id: o.checkoutId ?? null,
          api_key: o.nonce?.apiKey ?? null,
          nonce: o.nonce?.nonce ?? null,
          pay_to_override: o.payToAddress ?? null,
          callback_id: o.callbackId ?? null,
        })),
      ),
    ],
    { name: 'orders_insert_batch' },
  );
  return rows.map((r, i): CreateRowOutcome => {
    if (!r.nonce_ok) return { missing: r.key_active ? 'nonce_used' : 'key_revoked' };
    if (!r.wallet_found) return { missing: 'wallet' };
    if (!r.fee_account) return { missing: 'fee_account' };
    if (!r.fee_ok) return { missing: 'fee_short' };
    if (r.pay_to_address === null) return { missing: 'conflict' };
    const o = os[i]!;
    return {
      order: {
        id: o.id,
        merchant_id: o.merchantId,
        dapp_order_id: o.dappOrderId,
        flow: o.flow,
        chain_id: o.chainId,
        pay_to_chain_id: o.payToChainId,
        token_symbol: o.tokenSymbol,
        token_contract: o.tokenContract,
        decimals: o.decimals,
        from_address: o.fromAddress,
        pay_to_address: r.pay_to_address,
        amount_wei: o.amountWei.toString(),
        fee_amount: o.feeAmount.toString(),
        status: 'CHECKOUT_VERIFIED',
        expires_at: o.expiresAt,
        checkout_id: o.checkoutId ?? null,
      },
    };
  });
}

/** Which of the (merchant, dapp_order_id) pairs exist (tells a duplicate id from a live-terms clash). */
export async function existingDappOrderIds(q: Queryable, pairs: readonly { merchantId: string; dappOrderId: string }[]): Promise<Set<string>> {
  const { rows } = await q.query<{ merchant_id: string; dapp_order_id: string }>(
    `SELECT o.merchant_id, o.dapp_order_id FROM jsonb_to_recordset($1::jsonb) AS p(merchant_id text, dapp_order_id text)
     JOIN orders o ON o.merchant_id = p.merchant_id AND o.dapp_order_id = p.dapp_order_id`,
    [JSON.stringify(pairs.map((p) => ({ merchant_id: p.merchantId, dapp_order_id: p.dappOrderId })))],
  );
  return new Set(rows.map((r) => `${r.merchant_id}\n${r.dapp_order_id}`));
}

/** Plain insert without fee reservation (tests and tools that manage fees themselves). */
export async function insertOrder(q: Queryable, o: NewOrder): Promise<OrderRow> {
  const { rows } = await q.query<OrderRow>(
    `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
       from_address, pay_to_address, amount_wei, fee_amount, status, expires_at, callback_calldata, checkout_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'CHECKOUT_VERIFIED', $14, $15, $16)
     RETURNING *`,
    [
      o.id,
      o.merchantId,
      o.dappOrderId,
      o.flow,
      o.chainId,
      o.payToChainId,
      o.tokenSymbol,
      o.tokenContract,
      o.decimals,
      o.fromAddress,
      o.payToAddress,
      o.amountWei.toString(),
      o.feeAmount.toString(),
      o.expiresAt,
      o.callbackCalldata ?? null,
      o.checkoutId ?? null,
    ],
  );
  return rows[0]!;
}

/** An order of one merchant; another merchant's order is indistinguishable from a missing one. */
export async function getOrderForMerchant(q: Queryable, merchantId: string, orderId: string): Promise<OrderRow | undefined> {
  const { rows } = await q.query<OrderRow>('SELECT * FROM orders WHERE id = $1 AND merchant_id = $2', [orderId, merchantId]);
  return rows[0];
}

export async function getOrder(q: Queryable, orderId: string): Promise<OrderRow | undefined> {
  const { rows } = await q.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [orderId]);
  return rows[0];
}

/** The core's columns a transition may set besides status. */
const CORE_PATCHABLE = ['transfer_id', 'tx_hash', 'log_index', 'block_number', 'block_hash', 'paid_amount_wei', 'confirmations', 'payment_seen_at', 'confirmed_at', 'invoiced_at', 'failure_reason', 'refunded_amount', 'settlement_tx_hash'] as const;

/**
 * The columns of `orders` the modules built on orders set, by name and value type: each declares its
 * own by augmenting this interface (rails/card/columns.ts, settlement/columns.ts), so a patch that
 * names one type-checks; its OrderRowPart allows them at start-up. Exported for that augmentation,
 * which no import shows (hence `@public` for knip).
 * @public
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation, which only an interface allows
export interface OrderPartPatch {}
export type OrderPatch = Partial<Record<(typeof CORE_PATCHABLE)[number], unknown>> & Partial<OrderPartPatch>;

/**
 * Columns a transition may set besides status: an allow-list, because the names are interpolated
 * into SQL. The core's, then the registered parts' (`allowPatchColumns`), fixed at start-up from
 * the parts' definitions, never from input.
 */
const PATCHABLE = new Set<string>(CORE_PATCHABLE);

/** Adds a part's columns to the allow-list (orders/views.ts registerOrderRowParts); a column another part or the core has is refused. */
export function allowPatchColumns(columns: readonly string[]): void {
  for (const c of columns) {
    if (!/^[a-z][a-z0-9_]*$/.test(c)) throw new Error(`not a column name: ${c}`);
    if (PATCHABLE.has(c)) throw new Error(`column ${c} is already patchable`);
  }
  for (const c of columns) PATCHABLE.add(c);
}

/**
 * `UPDATE … WHERE id = $1 AND status = $expected`: the move happens only from the state the caller
 * saw, so two processes can never both apply it. Returns the updated row, or undefined when the
 * order was no longer in `from`.
 */
/** `SET` clauses for a patch; appends its values to `params` (column names are whitelisted). */
function patchSets(patch: OrderPatch, params: unknown[]): string[] {
  const sets: string[] = [];
  for (const [col, val] of Object.entries(patch)) {
    if (!PATCHABLE.has(col)) throw new Error(`column ${col} is not patchable`);
    params.push(val);
    sets.push(`${col} = $${params.length}`);
  }
  return sets;
}

/**
 * `UPDATE … WHERE id = $1 AND status = $expected`: the move happens only from the state the caller
 * saw, so two processes can never both apply it. Returns the updated row, or undefined when the
 * order was no longer in `from`.
 */
export async function updateOrderStatus(q: Queryable, orderId: string, from: OrderStatus, to: OrderStatus, patch: OrderPatch): Promise<OrderRow | undefined> {
  const params: unknown[] = [orderId, from, to];
  const sets = ['status = $3', 'updated_at = now()', ...patchSets(patch, params)];
  const { rows } = await q.query<OrderRow>(`UPDATE orders SET ${sets.join(', ')} WHERE id = $1 AND status = $2 RETURNING *`, params);
  return rows[0];
}

/** Sets payment fields without a status change (payment seen / depth progress / evidence cleared). */
export async function patchOrder(q: Queryable, orderId: string, expected: OrderStatus, patch: OrderPatch): Promise<OrderRow | undefined> {
  const params: unknown[] = [orderId, expected];
  const sets = ['updated_at = now()', ...patchSets(patch, params)];
  const { rows } = await q.query<OrderRow>(`UPDATE orders SET ${sets.join(', ')} WHERE id = $1 AND status = $2 RETURNING *`, params);
  return rows[0];
}

export async function insertTransition(q: Queryable, t: { orderId: string; from: OrderStatus | null; to: OrderStatus; trigger: string; detail?: unknown }): Promise<void> {
  await q.query('INSERT INTO order_transitions (order_id, from_status, to_status, trigger, detail) VALUES ($1, $2, $3, $4, $5::jsonb)', [t.orderId, t.from, t.to, t.trigger, t.detail === undefined ? null : JSON.stringify(t.detail)]);
}

/**
 * Live orders past their expiry with no payment seen: the sweeper's batch. An order expires only
 * once the chain's watcher has scanned past its expiry in chain time (cursor block timestamp):
 * while the watcher lags or an RPC is down, a payment made before expiry may not be recorded yet,
 * and expiring the order then would strand that payment.
 */
export async function listExpirable(q: Queryable, now: Date, limit: number, skipFlows: readonly string[] = []): Promise<{ id: string }[]> {
  // Not expired here: orders whose settlement is in flight (settlement_tx_hash recorded), and the
  // flows whose own settlement worker fails them at expiry (`skipFlows`).
  const { rows } = await q.query<{ id: string }>(
    `SELECT o.id FROM orders o
     JOIN chain_cursors c ON c.chain_id = o.chain_id AND c.block_timestamp > o.expires_at
     WHERE o.status = 'CHECKOUT_VERIFIED' AND o.transfer_id IS NULL AND o.settlement_tx_hash IS NULL AND o.expires_at <= $1
       AND NOT (o.flow = ANY($3::text[]))
     ORDER BY o.expires_at LIMIT $2`,
    [now, limit, skipFlows],
  );
  return rows;
}
