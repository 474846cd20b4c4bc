import type { Queryable } from '../db/database.ts';

/**
 * SQL of the one refunds model (migration 0028_refunds, docs/refunds.md): every refund of every
 * rail. The card rail's refund calls (rails/card/repo.ts) are these functions.
 */

type RefundRail = 'card' | 'direct' | 'delegate';
export type RefundStatus = 'pending' | 'succeeded' | 'failed';
export type RefundRequester = 'merchant' | 'operator' | 'processor';

export interface RefundRow {
  id: string;
  order_id: string;
  merchant_id: string;
  rail: RefundRail;
  /** base units (card: minor units of the fiat currency; crypto: token base units) */
  amount: string;
  currency: string | null;
  status: RefundStatus;
  processor_refund_id: string | null;
  chain_id: number | null;
  token_contract: string | null;
  from_address: string | null;
  to_address: string | null;
  tx_hash: string | null;
  transfer_id: number | string | null;
  reason: string | null;
  requested_by: RefundRequester;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface NewRefund {
  id: string;
  orderId: string;
  merchantId: string;
  rail: RefundRail;
  amount: bigint;
  status: RefundStatus;
  requestedBy: RefundRequester;
  processorRefundId?: string | undefined;
  reason?: string | undefined;
  chainId?: number | undefined;
  tokenContract?: string | undefined;
  fromAddress?: string | undefined;
  toAddress?: string | undefined;
  txHash?: string | undefined;
}

/** Inserts a refund; its currency is the order's fiat currency (card) or token symbol. */
export async function insertRefund(tx: Queryable, r: NewRefund): Promise<RefundRow> {
  const { rows } = await tx.query<RefundRow>(
    `INSERT INTO refunds (id, order_id, merchant_id, rail, amount, status, processor_refund_id, reason, requested_by,
       chain_id, token_contract, from_address, to_address, tx_hash, currency, completed_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
       CASE WHEN $4 = 'card' THEN o.fiat_currency ELSE o.token_symbol END,
       CASE WHEN $6 = 'pending' THEN NULL ELSE now() END
       FROM orders o WHERE o.id = $2
     RETURNING *`,
    [r.id, r.orderId, r.merchantId, r.rail, r.amount.toString(), r.status, r.processorRefundId ?? null, r.reason ?? null, r.requestedBy, r.chainId ?? null, r.tokenContract ?? null, r.fromAddress ?? null, r.toAddress ?? null, r.txHash ?? null],
  );
  return rows[0]!;
}

export async function updateRefund(tx: Queryable, id: string, patch: { status?: RefundStatus; processorRefundId?: string; txHash?: string; transferId?: number }): Promise<RefundRow | undefined> {
  const { rows } = await tx.query<RefundRow>(
    `UPDATE refunds SET status = coalesce($2, status), processor_refund_id = coalesce($3, processor_refund_id),
       tx_hash = coalesce($4, tx_hash), transfer_id = coalesce($5, transfer_id), updated_at = now(),
       completed_at = CASE WHEN coalesce($2, status) = 'pending' THEN NULL ELSE coalesce(completed_at, now()) END
     WHERE id = $1 RETURNING *`,
    [id, patch.status ?? null, patch.processorRefundId ?? null, patch.txHash ?? null, patch.transferId ?? null],
  );
  return rows[0];
}

export async function refundByProcessorId(q: Queryable, processorRefundId: string): Promise<RefundRow | undefined> {
  const { rows } = await q.query<RefundRow>('SELECT * FROM refunds WHERE processor_refund_id = $1', [processorRefundId]);
  return rows[0];
}

export async function listRefunds(q: Queryable, orderId: string): Promise<RefundRow[]> {
  const { rows } = await q.query<RefundRow>('SELECT * FROM refunds WHERE order_id = $1 ORDER BY created_at, id', [orderId]);
  return rows;
}

/** Base units taken by the refunds of an order that are not failed (pending ones hold their amount). */
export function takenBy(refunds: readonly RefundRow[]): bigint {
  return refunds.filter((r) => r.status !== 'failed').reduce((t, r) => t + BigInt(r.amount), 0n);
}

/** Records the succeeded total on the order (`orders.refunded_amount`, shown on its status record). */
export async function syncRefundedAmount(tx: Queryable, orderId: string): Promise<void> {
  await tx.query(
    `UPDATE orders SET refunded_amount = (SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id = $1 AND status = 'succeeded'), updated_at = now()
      WHERE id = $1`,
    [orderId],
  );
}

/**
 * The refund row of a DELEGATE order's executor refund (`txHash`: the recorded transaction),
 * written with the executor's record (settlement/delegate.ts). One live row per order
 * (`refunds_one_delegate`): a second call finds the first one.
 */
export async function recordDelegateRefund(tx: Queryable, r: { id: string; orderId: string; txHash: string; requestedBy: RefundRequester; reason?: string | undefined }): Promise<RefundRow> {
  const { rows } = await tx.query<RefundRow>(
    `INSERT INTO refunds (id, order_id, merchant_id, rail, amount, status, requested_by, reason, chain_id, token_contract, to_address, tx_hash, currency)
     SELECT $1, o.id, o.merchant_id, 'delegate', coalesce(o.paid_amount_wei, o.amount_wei), 'pending', $3, $4, o.chain_id, o.token_contract, o.from_address, $5, o.token_symbol
       FROM orders o WHERE o.id = $2
     ON CONFLICT (order_id) WHERE rail = 'delegate' AND status <> 'failed' DO NOTHING
     RETURNING *`,
    [r.id, r.orderId, r.requestedBy, r.reason ?? null, r.txHash],
  );
  if (rows[0]) return rows[0];
  const { rows: existing } = await tx.query<RefundRow>(`SELECT * FROM refunds WHERE order_id = $1 AND rail = 'delegate' AND status <> 'failed'`, [r.orderId]);
  return existing[0]!;
}

/**
 * DELEGATE refunds whose executor transaction finished: `confirmed` (any attempt mined) or every
 * attempt failed. Locked for the caller's transaction; SKIP LOCKED so two workers never finish
 * (and announce) one refund twice.
 */
export async function finishedDelegateRefunds(tx: Queryable, chainId: number, limit: number): Promise<(RefundRow & { outcome: 'confirmed' | 'failed'; mined_tx_hash: string | null })[]> {
  const { rows } = await tx.query<RefundRow & { outcome: 'confirmed' | 'failed'; mined_tx_hash: string | null }>(
    `SELECT r.*, f.outcome, f.mined_tx_hash FROM refunds r
       CROSS JOIN LATERAL (
         SELECT CASE WHEN bool_or(s.status = 'confirmed') THEN 'confirmed'
                     WHEN bool_and(s.status IN ('failed', 'replaced')) THEN 'failed' END AS outcome,
                max(s.tx_hash) FILTER (WHERE s.status = 'confirmed') AS mined_tx_hash
           FROM settlements s WHERE s.order_id = r.order_id AND s.kind = 'refund' AND s.chain_id = $1
       ) f
      WHERE r.rail = 'delegate' AND r.status = 'pending' AND r.chain_id = $1 AND f.outcome IS NOT NULL
      ORDER BY r.created_at, r.id
      LIMIT $2
      FOR UPDATE OF r SKIP LOCKED`,
    [chainId, limit],
  );
  return rows;
}
