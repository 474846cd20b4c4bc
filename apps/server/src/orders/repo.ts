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
 * Creates an order in ONE statement (autocommit): looks up the merchant's wallet for the chain and
 * token, reserves the fee (the conditional `fee_accounts` UPDATE plus its `fee_ledger` row — the
 * same move as fees/ledger.ts `reserveFee`), inserts the order and its first audit row.
 *
 * Why one statement: every order of a merchant updates the same `fee_accounts` row, so its row
 * lock serializes that merchant's order creation. As a BEGIN … COMMIT transaction of six round
 * trips the lock was held for all of them (bench/orders-api.ts: 381 creates/s vs 12,107 raw
 * inserts/s); as one statement it is held for one execution plus the commit.
 *
 * Returns the row, or why there is none (no wallet, fee short). Unique violations (duplicate
 * dapp_order_id, identical live order) throw and are mapped by the service.
 */
export async function insertOrderReservingFee(q: Queryable, o: Omit<NewOrder, 'payToAddress'>): Promise<{ order: OrderRow } | { missing: 'wallet' | 'fee' }> {
  const { rows } = await q.query<OrderRow & { wallet_found: number; fee_reserved: number }>(
    `WITH w AS (
       SELECT address FROM merchant_wallets WHERE merchant_id = $2 AND chain_id = $5 AND token_symbol = $7
     ), fee AS (
       UPDATE fee_accounts SET available = available - $12::numeric, reserved = reserved + $12::numeric
       WHERE merchant_id = $2 AND available >= $12::numeric AND EXISTS (SELECT 1 FROM w)
       RETURNING merchant_id
     ), ord AS (
       INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
         from_address, pay_to_address, amount_wei, fee_amount, status, expires_at, callback_calldata, checkout_id)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, w.address, $11, $12, 'CHECKOUT_VERIFIED', $13, $14, $15 FROM w, fee
       RETURNING *
     ), led AS (
       INSERT INTO fee_ledger (merchant_id, kind, from_account, to_account, amount, order_id)
       SELECT $2, 'reserve', 'available', 'reserved', $12::numeric, $1 FROM ord WHERE $12::numeric > 0
     ), tr AS (
       INSERT INTO order_transitions (order_id, from_status, to_status, trigger)
       SELECT $1, NULL, 'CHECKOUT_VERIFIED', 'create' FROM ord
     )
     SELECT ord.*, (SELECT count(*) FROM w)::int AS wallet_found, (SELECT count(*) FROM fee)::int AS fee_reserved
     FROM (SELECT 1) AS one LEFT JOIN ord ON true`,
    [o.id, o.merchantId, o.dappOrderId, o.flow, o.chainId, o.payToChainId, o.tokenSymbol, o.tokenContract, o.decimals,
      o.fromAddress, o.amountWei.toString(), o.feeAmount.toString(), o.expiresAt, o.callbackCalldata ?? null, o.checkoutId ?? null],
  );
  const r = rows[0]!;
  if (r.wallet_found === 0) return { missing: 'wallet' };
  if (r.fee_reserved === 0 || r.id === null) return { missing: 'fee' };
  const { wallet_found: _w, fee_reserved: _f, ...order } = r;
  return { order };
}

/** Plain insert without fee reservation (tests and tools that manage fees themselves). */
export async function insertOrder(q: Queryable, o: NewOrder): Promise<OrderRow> {
  const { rows } = await q.query<OrderRow>(
    `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
       from_address, pay_to_address, amount_wei, fee_amount, status, expires_at, callback_calldata, checkout_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'CHECKOUT_VERIFIED', $14, $15, $16)
     RETURNING *`,
    [o.id, o.merchantId, o.dappOrderId, o.flow, o.chainId, o.payToChainId, o.tokenSymbol, o.tokenContract, o.decimals,
      o.fromAddress, o.payToAddress, o.amountWei.toString(), o.feeAmount.toString(), o.expiresAt, o.callbackCalldata ?? null, o.checkoutId ?? null],
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

/** Columns a transition may set besides status (whitelist: names are interpolated into SQL). */
export const PATCHABLE = [
  'transfer_id', 'tx_hash', 'log_index', 'block_number', 'block_hash', 'paid_amount_wei', 'confirmations',
  'payment_seen_at', 'confirmed_at', 'invoiced_at', 'failure_reason',
] as const;
export type OrderPatch = Partial<Record<(typeof PATCHABLE)[number], unknown>>;

/**
 * `UPDATE … WHERE id = $1 AND status = $expected`: the move happens only from the state the caller
 * saw, so two processes can never both apply it. Returns the updated row, or undefined when the
 * order was no longer in `from`.
 */
/** `SET` clauses for a patch; appends its values to `params` (column names are whitelisted). */
function patchSets(patch: OrderPatch, params: unknown[]): string[] {
  const sets: string[] = [];
  for (const [col, val] of Object.entries(patch)) {
    if (!(PATCHABLE as readonly string[]).includes(col)) throw new Error(`column ${col} is not patchable`);
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
  await q.query('INSERT INTO order_transitions (order_id, from_status, to_status, trigger, detail) VALUES ($1, $2, $3, $4, $5::jsonb)', [
    t.orderId, t.from, t.to, t.trigger, t.detail === undefined ? null : JSON.stringify(t.detail),
  ]);
}

export interface ObservedTransfer {
  tx_hash: string;
  log_index: number;
  block_number: number;
  amount_wei: string;
  match_status: string;
  orphaned: boolean;
  from_address: string;
}

/**
 * An order of one merchant with the transfers recorded against it (paying, under-paid, late), in
 * one round trip: the status read is the hottest merchant call. Amounts travel as JSON strings.
 */
export async function getOrderWithTransfers(q: Queryable, merchantId: string, orderId: string): Promise<(OrderRow & { observed: ObservedTransfer[] }) | undefined> {
  const { rows } = await q.query<OrderRow & { observed: ObservedTransfer[] | null }>(
    `SELECT o.*, (
       SELECT json_agg(json_build_object('tx_hash', t.tx_hash, 'log_index', t.log_index, 'block_number', t.block_number,
                'amount_wei', t.amount_wei::text, 'match_status', t.match_status, 'orphaned', t.orphaned_at IS NOT NULL,
                'from_address', t.from_address) ORDER BY t.id DESC)
       FROM chain_transfers t WHERE t.order_id = o.id
     ) AS observed
     FROM orders o WHERE o.id = $1 AND o.merchant_id = $2`,
    [orderId, merchantId],
  );
  const r = rows[0];
  return r && { ...r, observed: r.observed ?? [] };
}

/**
 * Live orders past their expiry with no payment seen: the sweeper's batch. An order expires only
 * once the chain's watcher has scanned past its expiry in chain time (cursor block timestamp):
 * while the watcher lags or an RPC is down, a payment made before expiry may not be recorded yet,
 * and expiring the order then would strand that payment.
 */
export async function listExpirable(q: Queryable, now: Date, limit: number): Promise<{ id: string }[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT o.id FROM orders o
     JOIN chain_cursors c ON c.chain_id = o.chain_id AND c.block_timestamp > o.expires_at
     WHERE o.status = 'CHECKOUT_VERIFIED' AND o.transfer_id IS NULL AND o.expires_at <= $1
     ORDER BY o.expires_at LIMIT $2`,
    [now, limit],
  );
  return rows;
}
