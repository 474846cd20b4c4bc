import type { Queryable } from '../db/database.ts';

/**
 * SQL of the DELEGATE settlement capability.
 */

/** The last block each chain's watcher has scanned (its cursor), by chain id. */
export async function scannedHeads(q: Queryable): Promise<Map<number, number>> {
  const { rows } = await q.query<{ chain_id: number; block_number: number | string }>('SELECT chain_id, block_number FROM chain_cursors');
  return new Map(rows.map((r) => [Number(r.chain_id), Number(r.block_number)]));
}

// The executor's rows (table `settlements`): settlement/attempts.ts.
export * from './attempts.ts';

// ---------------------------------------------------------------- callback registrations

/** A `merchant_callbacks` row: a merchant's callback adapter on one chain. */
export interface CallbackRow {
  id: string;
  merchant_id: string;
  chain_id: number;
  callback_contract: `0x${string}`;
  eip712_name: string;
  eip712_version: string;
  created_at: Date;
  replaced_at: Date | null;
}

/**
 * Registers a callback for (merchant, chain), closing the active one in the same transaction
 * (one active registration per chain; older rows stay, orders point at them).
 */
export async function insertCallback(q: Queryable, r: { id: string; merchantId: string; chainId: number; callbackContract: string; eip712Name: string; eip712Version: string }): Promise<CallbackRow> {
  await q.query('UPDATE merchant_callbacks SET replaced_at = now() WHERE merchant_id = $1 AND chain_id = $2 AND replaced_at IS NULL', [r.merchantId, r.chainId]);
  const { rows } = await q.query<CallbackRow>(
    `INSERT INTO merchant_callbacks (id, merchant_id, chain_id, callback_contract, eip712_name, eip712_version)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [r.id, r.merchantId, r.chainId, r.callbackContract.toLowerCase(), r.eip712Name, r.eip712Version],
  );
  return rows[0]!;
}

/** The active registrations of a merchant, by chain. */
export async function listCallbacks(q: Queryable, merchantId: string): Promise<CallbackRow[]> {
  const { rows } = await q.query<CallbackRow>('SELECT * FROM merchant_callbacks WHERE merchant_id = $1 AND replaced_at IS NULL ORDER BY chain_id', [merchantId]);
  return rows;
}

export async function activeCallback(q: Queryable, merchantId: string, chainId: number): Promise<CallbackRow | undefined> {
  const { rows } = await q.query<CallbackRow>('SELECT * FROM merchant_callbacks WHERE merchant_id = $1 AND chain_id = $2 AND replaced_at IS NULL', [merchantId, chainId]);
  return rows[0];
}

export async function getCallback(q: Queryable, id: string): Promise<CallbackRow | undefined> {
  const { rows } = await q.query<CallbackRow>('SELECT * FROM merchant_callbacks WHERE id = $1', [id]);
  return rows[0];
}

// ---------------------------------------------------------------- worker leases

/**
 * Takes or renews the named lease for `holder` (the conditional upsert of chain/evm/lease.ts,
 * judged by the database clock); true when `holder` now holds it.
 */
export async function acquireWorkerLease(q: Queryable, name: string, holder: string, leaseMs: number): Promise<boolean> {
  const { rows } = await q.query<{ holder: string }>(
    `INSERT INTO worker_leases (name, holder, expires_at)
     VALUES ($1, $2, now() + $3::double precision * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE worker_leases.expires_at < now() OR worker_leases.holder = EXCLUDED.holder
     RETURNING holder`,
    [name, holder, leaseMs],
  );
  return rows[0]?.holder === holder;
}

export async function releaseWorkerLease(q: Queryable, name: string, holder: string): Promise<void> {
  await q.query('DELETE FROM worker_leases WHERE name = $1 AND holder = $2', [name, holder]);
}

// ---------------------------------------------------------------- DELEGATE orders

/**
 * Stores the payer's calldata signature unless one is stored already; returns the stored one
 * (equal to `signature` when it was stored now or before).
 */
export async function storeCalldataSignature(q: Queryable, orderId: string, signature: string): Promise<string | undefined> {
  const { rows } = await q.query<{ calldata_signature: string }>('UPDATE orders SET calldata_signature = coalesce(calldata_signature, $2), updated_at = now() WHERE id = $1 RETURNING calldata_signature', [orderId, signature]);
  return rows[0]?.calldata_signature;
}

/** A DELEGATE order as the settlement worker needs it. */
export interface DelegateOrderRow {
  id: string;
  merchant_id: string;
  flow: string;
  status: 'CHECKOUT_VERIFIED' | 'PAYMENT_CONFIRMED' | 'INVOICED' | 'FAILED' | 'EXPIRED' | 'CANCELLED';
  chain_id: number;
  token_contract: `0x${string}`;
  token_symbol: string;
  from_address: `0x${string}`;
  amount_wei: string;
  expires_at: Date;
  callback_id: string | null;
  callback_calldata: string | null;
  calldata_signature: `0x${string}` | null;
  transfer_id: number | null;
  refund_tx_hash: string | null;
  /** the merchant's wallet for the order's (chain, token): the payee of a plain settlement */
  wallet: `0x${string}` | null;
}

const DELEGATE_COLUMNS = `o.id, o.merchant_id, o.flow, o.status, o.chain_id, o.token_contract, o.token_symbol, o.from_address, o.amount_wei, o.expires_at,
  o.callback_id, o.callback_calldata, o.calldata_signature, o.transfer_id, o.refund_tx_hash,
  (SELECT mw.address FROM merchant_wallets mw WHERE mw.merchant_id = o.merchant_id AND mw.chain_id = o.chain_id AND mw.token_symbol = o.token_symbol) AS wallet`;

/**
 * Orders ready to settle from the pool: payment final (`confirmations` ≥ finality), signed when
 * a signing request was issued, no settlement recorded yet. Oldest first.
 */
export async function ordersDueForSettlement(q: Queryable, chainId: number, flows: readonly string[], finality: number, limit: number): Promise<DelegateOrderRow[]> {
  const { rows } = await q.query<DelegateOrderRow>(
    `SELECT ${DELEGATE_COLUMNS} FROM orders o
      WHERE o.chain_id = $1 AND o.flow = ANY($2::text[]) AND o.status = 'PAYMENT_CONFIRMED' AND o.settlement_tx_hash IS NULL
        AND o.confirmations >= $3 AND (o.callback_calldata IS NULL OR o.calldata_signature IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.chain_id = o.chain_id AND s.order_id = o.id AND s.kind = 'settle')
      ORDER BY o.created_at LIMIT $4`,
    [chainId, [...flows], finality, limit],
  );
  return rows;
}

/**
 * Live orders of a pulling flow with no payment seen yet, signed when needed, not about to
 * expire (`minExpiry`): candidates for approve-and-pull.
 */
export async function ordersToPull(q: Queryable, chainId: number, flows: readonly string[], minExpiry: Date, limit: number): Promise<DelegateOrderRow[]> {
  const { rows } = await q.query<DelegateOrderRow>(
    `SELECT ${DELEGATE_COLUMNS} FROM orders o
      WHERE o.chain_id = $1 AND o.flow = ANY($2::text[]) AND o.status = 'CHECKOUT_VERIFIED' AND o.transfer_id IS NULL AND o.settlement_tx_hash IS NULL
        AND o.expires_at > $3 AND (o.callback_calldata IS NULL OR o.calldata_signature IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.chain_id = o.chain_id AND s.order_id = o.id AND s.kind = 'settle')
      ORDER BY o.created_at LIMIT $4`,
    [chainId, [...flows], minExpiry, limit],
  );
  return rows;
}

/** Paid DELEGATE orders whose signing request is still unsigned at expiry: they fail. */
export async function unsignedExpiredOrders(q: Queryable, chainId: number, flows: readonly string[], now: Date, limit: number): Promise<DelegateOrderRow[]> {
  const { rows } = await q.query<DelegateOrderRow>(
    `SELECT ${DELEGATE_COLUMNS} FROM orders o
      WHERE o.chain_id = $1 AND o.flow = ANY($2::text[]) AND o.status = 'PAYMENT_CONFIRMED' AND o.settlement_tx_hash IS NULL
        AND o.callback_calldata IS NOT NULL AND o.calldata_signature IS NULL AND o.expires_at <= $3
      ORDER BY o.created_at LIMIT $4`,
    [chainId, [...flows], now, limit],
  );
  return rows;
}

/** Records the settlement transaction on its order (no status change: INVOICED comes at finality). */
export async function markSettlementSent(q: Queryable, orderId: string, txHash: string): Promise<void> {
  await q.query(`UPDATE orders SET settlement_tx_hash = $2, callback_status = CASE WHEN callback_id IS NOT NULL THEN 'pending' END, updated_at = now() WHERE id = $1`, [orderId, txHash]);
}

/**
 * Confirmed refunds whose order names another attempt (the refund was fee-bumped and the
 * replacement was mined): the order gets the mined transaction's hash.
 */
export async function syncRefundTxHashes(q: Queryable, chainId: number): Promise<void> {
  await q.query(
    `UPDATE orders o SET refund_tx_hash = s.tx_hash, updated_at = now() FROM settlements s
      WHERE s.chain_id = $1 AND s.kind = 'refund' AND s.status = 'confirmed' AND s.attempt > 0 AND o.id = s.order_id
        AND o.refund_tx_hash IS DISTINCT FROM s.tx_hash`,
    [chainId],
  );
}

/** Records the refund transaction on its (FAILED) order. */
export async function markRefundSent(q: Queryable, orderId: string, txHash: string): Promise<void> {
  await q.query('UPDATE orders SET refund_tx_hash = $2, updated_at = now() WHERE id = $1', [orderId, txHash]);
}

/**
 * Unfinished executor transactions (pending or sent: not yet final; the attempts of one (order, kind) count once) by chain, with the age in seconds of
 * the oldest one at `now`: the settlement backlog gauges of /metrics.
 */
/** Why an unfinished executor transaction waits, as /metrics counts it (docs/operations.md). */
export const WAITING_REASONS = ['unsent', 'on_chain', 'fee_bumped'] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

export async function settlementBacklog(q: Queryable, now: Date): Promise<Map<number, { n: number; oldestAgeS: number; byReason: Record<WaitingReason, number> }>> {
  // A settlement with fee-bumped replacements is one transaction to wait for, not several. Reason:
  // unsent = recorded, no attempt broadcast yet; fee_bumped = replaced with higher fees at least
  // once; on_chain = broadcast, waiting to be mined or to be finality_confirmations deep.
  const { rows } = await q.query<{ chain_id: number; reason: WaitingReason; n: number | string; oldest: Date | string }>(
    `SELECT chain_id, reason, count(*) AS n, min(oldest) AS oldest FROM (
       SELECT chain_id, CASE WHEN bool_and(status = 'pending') THEN 'unsent' WHEN max(attempt) > 0 THEN 'fee_bumped' ELSE 'on_chain' END AS reason, min(created_at) AS oldest
         FROM settlements WHERE status IN ('pending', 'sent') GROUP BY chain_id, order_id, kind
     ) g GROUP BY chain_id, reason`,
  );
  const out = new Map<number, { n: number; oldestAgeS: number; byReason: Record<WaitingReason, number> }>();
  for (const r of rows) {
    const id = Number(r.chain_id);
    const cur = out.get(id) ?? { n: 0, oldestAgeS: 0, byReason: { unsent: 0, on_chain: 0, fee_bumped: 0 } };
    const age = Math.max(0, Math.floor((now.getTime() - new Date(r.oldest).getTime()) / 1000));
    cur.n += Number(r.n);
    cur.oldestAgeS = Math.max(cur.oldestAgeS, age);
    cur.byReason[r.reason] = Number(r.n);
    out.set(id, cur);
  }
  return out;
}

export async function getDelegateOrder(q: Queryable, orderId: string): Promise<DelegateOrderRow | undefined> {
  const { rows } = await q.query<DelegateOrderRow>(`SELECT ${DELEGATE_COLUMNS} FROM orders o WHERE o.id = $1`, [orderId]);
  return rows[0];
}
