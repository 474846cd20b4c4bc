import type { Queryable } from '../db/database.ts';
import { WHOLE_TX, type ClaimPurpose } from './claims.ts';

/**
 * Reconciliation: every incoming transfer the watchers saw to this deployment's addresses (merchant
 * wallets, the settlement contract) in a range, and what claimed it in the ledger (orders/claims.ts),
 * or that nothing did. What an operator shows an auditor (`GET /admin/v1/reconciliation`,
 * `tollgate reconcile`) and what a merchant reads as its unclaimed transfers.
 *
 * Each transfer is listed once: transfers removed by a reorg are left out, and the claim shown is
 * the transfer's own, else the whole-transaction claim of a transaction the gateway sent.
 */
export interface ReconciliationQuery {
  chainId: number;
  merchantId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** Only transfers nothing claimed. */
  unclaimedOnly?: boolean;
  /** Keyset: list transfers after this (block number, log index). */
  after?: { block: bigint; logIndex: number } | undefined;
  limit: number;
}

export interface ReconciledTransfer {
  chain_id: number;
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_time: string | null;
  token_contract: string;
  from_address: string;
  to_address: string;
  amount_wei: string;
  /** The merchant whose wallet received it (null: the settlement contract or an address no longer a wallet). */
  merchant_id: string | null;
  claimed_by: { purpose: ClaimPurpose; id: string } | null;
}

interface Row {
  chain_id: number;
  tx_hash: string;
  log_index: number;
  block_number: string | number;
  block_timestamp: Date | null;
  token_contract: string;
  from_address: string;
  to_address: string;
  amount_wei: string;
  merchant_id: string | null;
  purpose: ClaimPurpose | null;
  purpose_id: string | null;
}

/**
 * One page of the reconciliation, oldest first.
 *
 * @example
 * const page = await reconcile(db, { chainId: 31337, merchantId: 'mch_…', limit: 500 });
 * const unclaimed = page.filter((t) => t.claimed_by === null);
 */
export async function reconcile(q: Queryable, r: ReconciliationQuery): Promise<ReconciledTransfer[]> {
  const { rows } = await q.query<Row>(
    `SELECT t.chain_id, t.tx_hash, t.log_index, t.block_number, t.block_timestamp, t.token_contract, t.from_address, t.to_address,
            t.amount_wei, w.merchant_id, c.purpose, c.purpose_id
       FROM chain_transfers t
       LEFT JOIN LATERAL (SELECT purpose, purpose_id FROM transfer_claims c
                           WHERE c.chain_id = t.chain_id AND c.tx_ref = t.tx_hash AND c.log_index IN (t.log_index, ${WHOLE_TX})
                           ORDER BY c.log_index DESC LIMIT 1) c ON true
       LEFT JOIN LATERAL (SELECT merchant_id FROM merchant_wallets w
                           WHERE w.chain_id = t.chain_id AND w.address = t.to_address
                           ORDER BY (w.merchant_id = $2) DESC, w.merchant_id LIMIT 1) w ON true
      WHERE t.chain_id = $1 AND t.orphaned_at IS NULL
        AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM merchant_wallets mw WHERE mw.merchant_id = $2 AND mw.chain_id = t.chain_id AND mw.address = t.to_address))
        AND ($3::timestamptz IS NULL OR t.block_timestamp >= $3)
        AND ($4::timestamptz IS NULL OR t.block_timestamp < $4)
        AND (NOT $5::boolean OR c.purpose IS NULL)
        AND ($6::bigint IS NULL OR (t.block_number, t.log_index) > ($6::bigint, $7::int))
      ORDER BY t.block_number, t.log_index
      LIMIT $8`,
    [r.chainId, r.merchantId ?? null, r.since ?? null, r.until ?? null, r.unclaimedOnly ?? false, r.after ? r.after.block.toString() : null, r.after?.logIndex ?? 0, r.limit],
  );
  return rows.map((x) => ({
    chain_id: Number(x.chain_id),
    tx_hash: x.tx_hash,
    log_index: Number(x.log_index),
    block_number: Number(x.block_number),
    block_time: x.block_timestamp ? x.block_timestamp.toISOString() : null,
    token_contract: x.token_contract,
    from_address: x.from_address,
    to_address: x.to_address,
    amount_wei: String(x.amount_wei),
    merchant_id: x.merchant_id,
    claimed_by: x.purpose && x.purpose_id ? { purpose: x.purpose, id: x.purpose_id } : null,
  }));
}
