/** SQL of the SOL_APPROVE_XFER worker: its orders and its settlement attempts (solana_settlements). */
import type { Queryable } from '../../../db/database.ts';
import { claimHolder, releaseOrderClaim, WHOLE_TX, wholeTxClaimInsertSql } from '../../../orders/claims.ts';

export const FLOW = 'SOL_APPROVE_XFER';

export interface ApprovalOrderRow {
  id: string;
  from_address: string;
  token_contract: string;
  token_symbol: string;
  amount_wei: string;
  expires_at: Date;
  /** the merchant's wallet for the order's token on the chain (null: none any more) */
  wallet: string | null;
}

const ORDER_COLUMNS = `o.id, o.from_address, o.token_contract, o.token_symbol, o.amount_wei::text AS amount_wei, o.expires_at,
  (SELECT w.address FROM merchant_wallets w WHERE w.merchant_id = o.merchant_id AND w.chain_id = o.chain_id AND w.token_symbol = o.token_symbol) AS wallet`;
const NO_ATTEMPT = `NOT EXISTS (SELECT 1 FROM solana_settlements s WHERE s.order_id = o.id AND s.status <> 'expired')`;

/**
 * Live orders waiting for their approval (no attempt that may still land), by id after `after`: the
 * worker walks them a page per tick and starts over at the end, so every waiting order is looked at
 * however many there are (a page from the oldest each tick would starve the newer ones).
 */
export async function ordersAwaitingApproval(q: Queryable, chainId: number, now: Date, limit: number, after = ''): Promise<ApprovalOrderRow[]> {
  const { rows } = await q.query<ApprovalOrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM orders o
      WHERE o.chain_id = $1 AND o.flow = '${FLOW}' AND o.status = 'CHECKOUT_VERIFIED' AND o.expires_at > $2 AND o.id > $4 AND ${NO_ATTEMPT}
      ORDER BY o.id LIMIT $3`,
    [chainId, now, limit, after],
  );
  return rows;
}

/** Orders past expiry with no approval acted on: they fail (the worker, not the expiry sweeper). */
export async function ordersExpiredUnapproved(q: Queryable, chainId: number, now: Date, limit: number): Promise<{ id: string }[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT o.id FROM orders o
      WHERE o.chain_id = $1 AND o.flow = '${FLOW}' AND o.status = 'CHECKOUT_VERIFIED' AND o.expires_at <= $2 AND ${NO_ATTEMPT}
      ORDER BY o.expires_at LIMIT $3`,
    [chainId, now, limit],
  );
  return rows;
}

export interface AttemptRow {
  id: number;
  order_id: string;
  signature: string;
  wire_tx: string;
  last_valid_block_height: bigint;
  approval_signature: string | null;
  status: 'pending' | 'sent' | 'confirmed';
  order_status: string;
}

/**
 * Records a signed attempt before it is sent; returns its id, or undefined when the order already has an attempt
 * that may still land or has landed (the partial unique index: once per order, across processes).
 */
export async function recordAttempt(q: Queryable, a: { orderId: string; chainId: number; signature: string; wire: string; lastValidBlockHeight: bigint; approvalSignature: string }): Promise<number | undefined> {
  const { rows } = await q.query<{ id: number | string }>(
    `INSERT INTO solana_settlements (order_id, chain_id, signature, wire_tx, last_valid_block_height, approval_signature, status)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending') ON CONFLICT DO NOTHING RETURNING id`,
    [a.orderId, a.chainId, a.signature, a.wire, a.lastValidBlockHeight.toString(), a.approvalSignature],
  );
  return rows[0] ? Number(rows[0].id) : undefined;
}

/** Attempts that are not final yet, with their order's status. */
export async function openAttempts(q: Queryable, chainId: number, limit: number): Promise<AttemptRow[]> {
  const { rows } = await q.query<Omit<AttemptRow, 'last_valid_block_height' | 'id'> & { id: number | string; last_valid_block_height: string }>(
    `SELECT s.id, s.order_id, s.signature, s.wire_tx, s.last_valid_block_height::text AS last_valid_block_height, s.approval_signature, s.status, o.status AS order_status
       FROM solana_settlements s JOIN orders o ON o.id = s.order_id
      WHERE s.chain_id = $1 AND s.status IN ('pending', 'sent', 'confirmed') ORDER BY s.id LIMIT $2`,
    [chainId, limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), last_valid_block_height: BigInt(r.last_valid_block_height) }));
}

export async function setAttempt(q: Queryable, id: number, from: readonly string[], to: 'sent' | 'confirmed' | 'finalized' | 'failed' | 'expired', extra: { error?: string; slot?: bigint } = {}): Promise<boolean> {
  const { rows } = await q.query(
    `UPDATE solana_settlements SET status = $3, error = COALESCE($4, error), slot = COALESCE($5, slot), updated_at = now()
      WHERE id = $1 AND status = ANY($2::text[]) RETURNING id`,
    [id, from, to, extra.error ?? null, extra.slot?.toString() ?? null],
  );
  return rows.length === 1;
}

/**
 * Claims every transfer of a settlement transaction for its order (orders/claims.ts, a
 * whole-transaction claim: the instruction indexes are the pull's, but the claim says "the gateway
 * sent this"), in the transaction that records the attempt, before it is sent: the DIRECT watcher
 * that sees the pull land in the merchant's token account records it as claimed, never as a
 * payment. False when another purpose holds the signature already (then nothing is recorded).
 */
export async function claimSettlement(q: Queryable, chainId: number, signature: string, orderId: string): Promise<boolean> {
  const { rows } = await q.query(wholeTxClaimInsertSql('$1', '$2', "'order'", '$3'), [chainId, signature, orderId]);
  if (rows.length > 0) return true;
  const holder = await claimHolder(q, { chainId, txRef: signature, index: WHOLE_TX });
  return holder?.purpose === 'order' && holder.purposeId === orderId;
}

/** Gives back the claim of an attempt that can never land (its blockhash expired unseen). */
export function releaseSettlementClaim(q: Queryable, chainId: number, signature: string, orderId: string): Promise<void> {
  return releaseOrderClaim(q, { chainId, txRef: signature, index: WHOLE_TX }, orderId);
}
