import type { Queryable } from '../db/database.ts';

/**
 * SQL of the DELEGATE settlement capability.
 */

/** The last block each chain's watcher has scanned (its cursor), by chain id. */
export async function scannedHeads(q: Queryable): Promise<Map<number, number>> {
  const { rows } = await q.query<{ chain_id: number; block_number: number | string }>('SELECT chain_id, block_number FROM chain_cursors');
  return new Map(rows.map((r) => [Number(r.chain_id), Number(r.block_number)]));
}

/**
 * pending: recorded, maybe not broadcast; sent: a node accepted it; confirmed: mined, succeeded and
 * deep enough; failed: reverted, or its nonce went to another transaction; replaced: another
 * attempt of the same (order, kind) was mined instead (fee bumping, migration 0015).
 */
export type SettlementStatus = 'pending' | 'sent' | 'confirmed' | 'failed' | 'replaced';
export type SettlementKind = 'settle' | 'refund' | 'x402' | 'relay';

/** One row of `settlements`: a transaction of the executor, recorded before it is broadcast. */
export interface SettlementRecord {
  id: number;
  chainId: number;
  orderId: string;
  kind: SettlementKind;
  /** 0 for the first transaction of (order, kind); 1, 2, … for fee-bumped replacements (same nonce). */
  attempt: number;
  executor: `0x${string}`;
  nonce: number;
  rawTx: `0x${string}`;
  txHash: `0x${string}`;
  status: SettlementStatus;
  failureReason: string | null;
  blockNumber: number | null;
  /** Milliseconds since the row was recorded, by the database clock (only from `unfinishedSettlements`). */
  ageMs?: number;
}

interface Row {
  id: number | string;
  chain_id: number;
  order_id: string;
  kind: SettlementKind;
  attempt: number | string;
  executor: `0x${string}`;
  nonce: number | string;
  raw_tx: `0x${string}`;
  tx_hash: `0x${string}`;
  status: SettlementStatus;
  failure_reason: string | null;
  block_number: number | string | null;
  age_ms?: number | string;
}

const COLUMNS = 'id, chain_id, order_id, kind, attempt, executor, nonce, raw_tx, tx_hash, status, failure_reason, block_number';

function toRecord(r: Row): SettlementRecord {
  return {
    id: Number(r.id),
    chainId: Number(r.chain_id),
    orderId: r.order_id,
    kind: r.kind,
    attempt: Number(r.attempt),
    executor: r.executor,
    nonce: Number(r.nonce),
    rawTx: r.raw_tx,
    txHash: r.tx_hash,
    status: r.status,
    failureReason: r.failure_reason,
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    ...(r.age_ms !== undefined ? { ageMs: Number(r.age_ms) } : {}),
  };
}

/**
 * The transaction that stands for (order, kind): its finished attempt (confirmed or failed) when
 * there is one, else its latest attempt (the highest fee).
 */
export async function findSettlement(q: Queryable, chainId: number, orderId: string, kind: SettlementKind): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM settlements WHERE chain_id = $1 AND order_id = $2 AND kind = $3
      ORDER BY (status IN ('confirmed', 'failed')) DESC, attempt DESC LIMIT 1`,
    [chainId, orderId, kind],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Every attempt of (order, kind), first to last. */
export async function settlementAttempts(q: Queryable, chainId: number, orderId: string, kind: SettlementKind): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS}, floor(extract(epoch FROM now() - created_at) * 1000) AS age_ms FROM settlements
      WHERE chain_id = $1 AND order_id = $2 AND kind = $3 ORDER BY attempt`,
    [chainId, orderId, kind],
  );
  return rows.map(toRecord);
}

/** The highest nonce the executor has recorded on the chain, or -1. */
export async function lastRecordedNonce(q: Queryable, chainId: number, executor: string): Promise<number> {
  const { rows } = await q.query<{ n: number | string | null }>('SELECT max(nonce) AS n FROM settlements WHERE chain_id = $1 AND executor = $2', [chainId, executor]);
  return rows[0]?.n === null || rows[0]?.n === undefined ? -1 : Number(rows[0].n);
}

type NewRow = Pick<SettlementRecord, 'chainId' | 'orderId' | 'kind' | 'executor' | 'nonce' | 'rawTx' | 'txHash'> & { attempt?: number };

/**
 * Records the intent (status pending). Undefined when the (order, kind) already has a row of this
 * attempt: the caller lost a race and must not send its transaction. A first attempt whose nonce
 * another first attempt holds throws a unique violation (a second executor instance on the key).
 */
export async function insertSettlement(q: Queryable, r: NewRow, companion?: CompanionInsert): Promise<SettlementRecord | undefined> {
  const values = [r.chainId, r.orderId, r.kind, r.attempt ?? 0, r.executor.toLowerCase(), r.nonce, r.rawTx.toLowerCase(), r.txHash.toLowerCase()];
  if (companion) {
    // One statement: the companion row and the settlement row commit together or not at all.
    const n = companion.params.length;
    const { rows } = await q.query<Row>(
      `WITH companion AS (${companion.sql})
       INSERT INTO settlements (chain_id, order_id, kind, attempt, executor, nonce, raw_tx, tx_hash, status)
       SELECT ${values.map((_, i) => `$${n + i + 1}`).join(', ')}, 'pending' WHERE EXISTS (SELECT 1 FROM companion)
       ON CONFLICT (chain_id, order_id, kind, attempt) DO NOTHING RETURNING ${COLUMNS}`,
      [...companion.params, ...values],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }
  const { rows } = await q.query<Row>(
    `INSERT INTO settlements (chain_id, order_id, kind, attempt, executor, nonce, raw_tx, tx_hash, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending')
     ON CONFLICT (chain_id, order_id, kind, attempt) DO NOTHING RETURNING ${COLUMNS}`,
    values,
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * A row another capability writes with a settlement (x402: the authorization's claim): an
 * `INSERT … ON CONFLICT DO NOTHING RETURNING …` with parameters $1..$n. No row returned (the
 * companion exists already) → the settlement is not recorded either.
 */
export interface CompanionInsert {
  sql: string;
  params: unknown[];
}

/** Moves a row forward; `from` guards against a concurrent writer having moved it already. */
export async function setSettlementStatus(
  q: Queryable,
  id: number,
  from: readonly SettlementStatus[],
  to: SettlementStatus,
  extra: { blockNumber?: number; failureReason?: string } = {},
): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `UPDATE settlements SET status = $3, block_number = coalesce($4, block_number), failure_reason = coalesce($5, failure_reason), updated_at = now()
     WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${COLUMNS}`,
    [id, [...from], to, extra.blockNumber ?? null, extra.failureReason ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Marks pending rows sent, many in one statement (the executor's group commit of broadcasts). */
export async function markSentMany(q: Queryable, ids: readonly number[]): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(
    `UPDATE settlements SET status = 'sent', updated_at = now() WHERE id = ANY($1::bigint[]) AND status = 'pending' RETURNING ${COLUMNS}`,
    [[...ids]],
  );
  return rows.map(toRecord);
}

/**
 * Finishes an attempt (confirmed or failed) and marks every other unfinished attempt of the same
 * (order, kind) replaced, in ONE statement: there is never a moment when two attempts of a
 * settlement are finished, or one is finished while a sibling still looks sendable.
 */
export async function finishAttempt(
  q: Queryable,
  id: number,
  to: 'confirmed' | 'failed',
  extra: { blockNumber?: number; failureReason?: string } = {},
): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `WITH w AS (
       UPDATE settlements SET status = $2, block_number = coalesce($3, block_number), failure_reason = coalesce($4, failure_reason), updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'sent') RETURNING ${COLUMNS}
     ), r AS (
       UPDATE settlements s SET status = 'replaced', updated_at = now() FROM w
        WHERE s.chain_id = w.chain_id AND s.order_id = w.order_id AND s.kind = w.kind AND s.id <> w.id AND s.status IN ('pending', 'sent')
     )
     SELECT * FROM w`,
    [id, to, extra.blockNumber ?? null, extra.failureReason ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * Unfinished rows (pending or sent) of the oldest `limit` unfinished (order, kind) groups of a
 * chain, with their age: the reconciler's work. Every unfinished attempt of a group comes along.
 */
export async function unfinishedSettlements(q: Queryable, chainId: number, limit = 100): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS}, floor(extract(epoch FROM now() - created_at) * 1000) AS age_ms FROM settlements
      WHERE chain_id = $1 AND status IN ('pending', 'sent')
        AND (order_id, kind) IN (SELECT order_id, kind FROM settlements WHERE chain_id = $1 AND status IN ('pending', 'sent') ORDER BY id LIMIT $2)
      ORDER BY id`,
    [chainId, limit],
  );
  return rows.map(toRecord);
}
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
export async function insertCallback(
  q: Queryable,
  r: { id: string; merchantId: string; chainId: number; callbackContract: string; eip712Name: string; eip712Version: string },
): Promise<CallbackRow> {
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
  const { rows } = await q.query<{ calldata_signature: string }>(
    'UPDATE orders SET calldata_signature = coalesce(calldata_signature, $2), updated_at = now() WHERE id = $1 RETURNING calldata_signature',
    [orderId, signature],
  );
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

/** Finished settlement rows (confirmed or failed) whose order has not moved yet. */
export async function finishedUnapplied(q: Queryable, chainId: number, limit: number): Promise<(SettlementRecord & { orderStatus: DelegateOrderRow['status']; callbackId: string | null })[]> {
  const { rows } = await q.query<Row & { order_status: DelegateOrderRow['status']; callback_id: string | null }>(
    `SELECT ${COLUMNS.split(', ').map((c) => `s.${c}`).join(', ')}, o.status AS order_status, o.callback_id
       FROM settlements s JOIN orders o ON o.id = s.order_id
      WHERE s.chain_id = $1 AND s.kind = 'settle' AND s.status IN ('confirmed', 'failed') AND o.status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED')
      ORDER BY s.id LIMIT $2`,
    [chainId, limit],
  );
  return rows.map((r) => ({ ...toRecord(r), orderStatus: r.order_status, callbackId: r.callback_id }));
}

/** Records the settlement transaction on its order (no status change: INVOICED comes at finality). */
export async function markSettlementSent(q: Queryable, orderId: string, txHash: string): Promise<void> {
  await q.query(
    `UPDATE orders SET settlement_tx_hash = $2, callback_status = CASE WHEN callback_id IS NOT NULL THEN 'pending' END, updated_at = now() WHERE id = $1`,
    [orderId, txHash],
  );
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
export async function settlementBacklog(q: Queryable, now: Date): Promise<Map<number, { n: number; oldestAgeS: number }>> {
  const { rows } = await q.query<{ chain_id: number; n: number | string; oldest: Date | string }>(
    // A settlement with fee-bumped replacements is one transaction to wait for, not several.
    `SELECT chain_id, count(DISTINCT (order_id, kind)) AS n, min(created_at) AS oldest FROM settlements WHERE status IN ('pending', 'sent') GROUP BY chain_id`,
  );
  return new Map(rows.map((r) => [Number(r.chain_id), { n: Number(r.n), oldestAgeS: Math.max(0, Math.floor((now.getTime() - new Date(r.oldest).getTime()) / 1000)) }]));
}

export async function getDelegateOrder(q: Queryable, orderId: string): Promise<DelegateOrderRow | undefined> {
  const { rows } = await q.query<DelegateOrderRow>(`SELECT ${DELEGATE_COLUMNS} FROM orders o WHERE o.id = $1`, [orderId]);
  return rows[0];
}
