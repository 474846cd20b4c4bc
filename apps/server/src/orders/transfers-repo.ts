// The chain transfers recorded against orders, as the order core reads and accepts them: the
// transfers the status record shows, and the late or under-payments a merchant (or a quick-pay
// session summing short payments) may accept once final. The orders row itself is repo.ts's.
import type { Queryable } from '../db/database.ts';
import type { OrderRow } from './repo.ts';

export interface ObservedTransfer {
  tx_hash: string;
  log_index: number;
  block_number: number;
  amount_wei: string;
  match_status: string;
  orphaned: boolean;
  accepted: boolean;
  /** Depth as far as the watcher has scanned (its cursor), 0 when the cursor is below the block. */
  confirmations: number;
  from_address: string;
}

export type OrderWithTransfers = OrderRow & { observed: ObservedTransfer[] };

/** The transfers recorded against order `o` as one JSON array (null when none): both status reads use it. */
export const OBSERVED_TRANSFERS_SQL = `(
  SELECT json_agg(json_build_object('tx_hash', t.tx_hash, 'log_index', t.log_index, 'block_number', t.block_number,
           'amount_wei', t.amount_wei::text, 'match_status', t.match_status, 'orphaned', t.orphaned_at IS NOT NULL,
           'accepted', t.accepted_at IS NOT NULL, 'confirmations', GREATEST(coalesce(c.block_number - t.block_number + 1, 0), 0),
           'from_address', t.from_address) ORDER BY t.id DESC)
  FROM chain_transfers t LEFT JOIN chain_cursors c ON c.chain_id = t.chain_id WHERE t.order_id = o.id
)`;

/**
 * An order of one merchant with the transfers recorded against it (paying, under-paid, late,
 * duplicate), in one round trip. Amounts travel as JSON strings. The merchant API's signed status
 * read takes orders/status-repo.ts instead (its nonce in the same statement).
 */
export async function getOrderWithTransfers(q: Queryable, merchantId: string, orderId: string): Promise<OrderWithTransfers | undefined> {
  const { rows } = await q.query<OrderRow & { observed: ObservedTransfer[] | null }>(`SELECT o.*, ${OBSERVED_TRANSFERS_SQL} AS observed FROM orders o WHERE o.id = $1 AND o.merchant_id = $2`, [orderId, merchantId], {
    name: 'order_with_transfers',
  });
  const r = rows[0];
  return r && { ...r, observed: r.observed ?? [] };
}

/** The order of one merchant, locked for the rest of the caller's transaction. */
export async function lockOrderForMerchant(q: Queryable, merchantId: string, orderId: string): Promise<OrderRow | undefined> {
  const { rows } = await q.query<OrderRow>('SELECT * FROM orders WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [orderId, merchantId]);
  return rows[0];
}

/** A late or under-payment recorded against an order and still on the chain (not orphaned). */
export interface RecordedTransfer {
  id: number;
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_hash: string;
  amount_wei: string;
  match_status: 'late' | 'underpaid';
  seen_at: Date;
  accepted_at: Date | null;
}

export async function listRecordedTransfers(q: Queryable, orderId: string): Promise<RecordedTransfer[]> {
  const { rows } = await q.query<RecordedTransfer>(
    `SELECT id, tx_hash, log_index, block_number, block_hash, amount_wei::text AS amount_wei, match_status, seen_at, accepted_at FROM chain_transfers
      WHERE order_id = $1 AND match_status IN ('late', 'underpaid') AND orphaned_at IS NULL ORDER BY id`,
    [orderId],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), block_number: Number(r.block_number) }));
}

export async function markTransferAccepted(q: Queryable, transferId: number, at: Date): Promise<void> {
  await q.query('UPDATE chain_transfers SET accepted_at = $2 WHERE id = $1 AND accepted_at IS NULL', [transferId, at]);
}

/** The last block the chain's watcher has fully scanned (its cursor), if it has started. */
export async function scannedBlock(q: Queryable, chainId: number): Promise<bigint | undefined> {
  const { rows } = await q.query<{ block_number: number | string }>('SELECT block_number FROM chain_cursors WHERE chain_id = $1', [chainId]);
  return rows[0] ? BigInt(rows[0].block_number) : undefined;
}
