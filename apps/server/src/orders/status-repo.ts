import type { Queryable } from '../db/database.ts';
import type { OrderRow } from './repo.ts';
import { OBSERVED_TRANSFERS_SQL, type ObservedTransfer, type OrderWithTransfers } from './transfers-repo.ts';

/** One signed status read of a batch; the pairs (apiKey, nonce) of one call must be distinct. */
export interface NonceAndOrder {
  apiKey: string;
  nonce: string;
  merchantId: string;
  orderId: string;
}

/** Per read, in input order: its nonce was recorded (and the order read: absent when not found), or why not. */
export type NonceAndOrderRow = { outcome: 'consumed'; order: OrderWithTransfers | undefined } | { outcome: 'replay' | 'key_revoked' };

/**
 * Records the nonces of several signed reads and reads their orders, in one statement (one round
 * trip, one commit). The INSERT runs to completion whatever the SELECT reads (a data-modifying
 * CTE always does), and an order is joined only to a nonce the INSERT returned, so a replayed read
 * gets nothing. A nonce not recorded is a replay, or its key is revoked: the key's `revoked_at` is
 * read in the same snapshot as the INSERT's join, so the two cannot disagree. Rows insert in
 * (api_key, nonce) order, as merchants/repo.ts `insertNonces` does, so concurrent batches lock the
 * nonce index in one order.
 */
export async function consumeNoncesReadingOrders(q: Queryable, reads: readonly NonceAndOrder[]): Promise<NonceAndOrderRow[]> {
  const { rows } = await q.query<OrderRow & { observed: ObservedTransfer[] | null; read_index: number; nonce_consumed: boolean; key_revoked: boolean }>(
    `WITH u AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS u(read_index int, api_key text, nonce text, merchant_id text, order_id text)
     ), ins AS (
       INSERT INTO request_nonces (api_key, nonce)
       SELECT u.api_key, u.nonce FROM u JOIN api_keys k ON k.api_key = u.api_key AND k.revoked_at IS NULL
       ORDER BY u.api_key, u.nonce
       ON CONFLICT DO NOTHING
       RETURNING api_key, nonce
     )
     SELECT u.read_index, ins.nonce IS NOT NULL AS nonce_consumed, coalesce(k.revoked_at IS NOT NULL, false) AS key_revoked, o.*, ${OBSERVED_TRANSFERS_SQL} AS observed
       FROM u
       LEFT JOIN ins ON ins.api_key = u.api_key AND ins.nonce = u.nonce
       LEFT JOIN api_keys k ON ins.nonce IS NULL AND k.api_key = u.api_key
       LEFT JOIN orders o ON ins.nonce IS NOT NULL AND o.id = u.order_id AND o.merchant_id = u.merchant_id
      ORDER BY u.read_index`,
    [JSON.stringify(reads.map((r, i) => ({ read_index: i, api_key: r.apiKey, nonce: r.nonce, merchant_id: r.merchantId, order_id: r.orderId })))],
    { name: 'nonces_insert_order_reads' },
  );
  if (rows.length !== reads.length) throw new Error(`status batch returned ${rows.length} rows for ${reads.length} reads`);
  return rows.map(({ read_index: _i, nonce_consumed, key_revoked, observed, ...o }): NonceAndOrderRow => {
    if (!nonce_consumed) return { outcome: key_revoked ? 'key_revoked' : 'replay' };
    return { outcome: 'consumed', order: o.id === null ? undefined : { ...(o as OrderRow), observed: observed ?? [] } };
  });
}
