import type { Queryable } from '../db/database.ts';

/**
 * The claims ledger: every incoming transfer that any path of Tollgate looks at is claimed by at
 * most one purpose (table `transfer_claims`, migration 0019; the rule for merchants is in
 * docs/attribution.md, "One transfer, one purpose").
 *
 * A claim is one row keyed by the transfer — EVM (chain id, tx hash, log index), Solana (chain id,
 * signature, instruction index) — written in the same transaction or statement as the state
 * change it causes, by whichever path reaches the transfer first: the chain watchers (orders), the
 * machine-payment verify (both doors), the executor recording a transaction it is about to send
 * (x402 settle, relay, DELEGATE settlement, refund: a whole-transaction claim, `WHOLE_TX`). The
 * primary key makes a second claim fail; every other path then treats the transfer as spent.
 *
 * This module owns the table's SQL for the order side and exports the one predicate the batched
 * machine-payment claim statement inlines (`takenBySql`), so "is this transfer spent" has one
 * definition.
 */

/**
 * How far a block's timestamp may trail the gateway's clock (clock skew between the gateway and the
 * chain: validators', sequencers' and this machine's clocks differ by seconds, and a dev chain's by
 * up to a second of rounding). A transfer may be this much older than the order or machine-payment
 * challenge it pays. Part of the attribution rule (chain/evm/matching.ts), of the precedence of an
 * order over a challenge (mpp/repo.ts claimTransfers) and of a challenge's own time window
 * (mpp/verify.ts judge).
 */
export const CHAIN_CLOCK_SKEW_MS = 120_000;

export type ClaimPurpose = 'order' | 'mpp_challenge' | 'x402_settlement' | 'refund';

/** log_index of a claim on every transfer of a transaction Tollgate sends itself. */
export const WHOLE_TX = -1;

export interface TransferKey {
  chainId: number;
  /** EVM transaction hash (lowercase 0x…) or Solana signature. */
  txRef: string;
  /** EVM log index or Solana instruction index. */
  index: number;
}

export interface ClaimHolder {
  purpose: ClaimPurpose;
  purposeId: string;
  /** The claimed key's index: the transfer's own, or WHOLE_TX. */
  index: number;
}

/**
 * SQL predicate: the transfer (`chain`, `tx`, `idx` are SQL expressions) is claimed by anything but
 * the purpose (`purpose`, `purposeId`). A whole-transaction claim of the same purpose does not
 * count: a challenge paid by an authorization the gateway relayed for it claims the relay's
 * transaction first and its transfer afterwards.
 *
 * @example
 * takenBySql('i.chain_id', 'i.tx_hash', 'i.log_index', "'mpp_challenge'", 'i.id')
 */
export function takenBySql(chain: string, tx: string, idx: string, purpose: string, purposeId: string): string {
  return `EXISTS (SELECT 1 FROM transfer_claims tc WHERE tc.chain_id = ${chain} AND tc.tx_ref = ${tx}
            AND (tc.log_index = ${idx} OR (tc.log_index = ${WHOLE_TX} AND NOT (tc.purpose = ${purpose} AND tc.purpose_id = ${purposeId}))))`;
}

/** Who holds the transfer: its own claim first, else a whole-transaction claim; undefined when nobody does. */
export async function claimHolder(q: Queryable, k: TransferKey): Promise<ClaimHolder | undefined> {
  const { rows } = await q.query<{ purpose: ClaimPurpose; purpose_id: string; log_index: number }>(
    `SELECT purpose, purpose_id, log_index FROM transfer_claims
      WHERE chain_id = $1 AND tx_ref = $2 AND log_index IN ($3, ${WHOLE_TX}) ORDER BY log_index DESC LIMIT 1`,
    [k.chainId, k.txRef, k.index],
  );
  const r = rows[0];
  return r ? { purpose: r.purpose, purposeId: r.purpose_id, index: r.log_index } : undefined;
}

/**
 * Claims one transfer for an order (paid, or recorded against it as late, under- or duplicate
 * payment). 'claimed' when the order holds it (now or already); otherwise the holder, and nothing
 * was written. A transaction the gateway sent for this same order (a relayed authorization,
 * claimed as a whole before it was broadcast) may pay it; for any other order it is spent. Under a concurrent claim of the same key the insert waits for the other
 * transaction and then sees its row (no error, no second claim).
 */
export async function claimForOrder(q: Queryable, k: TransferKey, c: { orderId: string; amountWei: bigint; payer: string }): Promise<'claimed' | ClaimHolder> {
  const { rows } = await q.query(
    `INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer)
     SELECT $1, $2, $3, 'order', $4, $5, $6
      WHERE NOT EXISTS (SELECT 1 FROM transfer_claims WHERE chain_id = $1 AND tx_ref = $2 AND log_index = ${WHOLE_TX}
                          AND NOT (purpose = 'order' AND purpose_id = $4))
     ON CONFLICT DO NOTHING RETURNING 1`,
    [k.chainId, k.txRef, k.index, c.orderId, c.amountWei.toString(), c.payer],
  );
  if (rows.length > 0) return 'claimed';
  const holder = await claimHolder(q, k);
  if (!holder) throw new Error(`transfer ${k.chainId}:${k.txRef}:${k.index} neither claimed nor claimable`);
  return holder.purpose === 'order' && holder.purposeId === c.orderId && holder.index === k.index ? 'claimed' : holder;
}

/**
 * Gives back an order's claim of a transfer that a reorg removed from the chain (the caller
 * un-sees the payment in the same transaction). If the transaction is mined again, the watcher
 * claims it again when it attributes it.
 */
export async function releaseOrderClaim(q: Queryable, k: TransferKey, orderId: string): Promise<void> {
  await q.query(`DELETE FROM transfer_claims WHERE chain_id = $1 AND tx_ref = $2 AND log_index = $3 AND purpose = 'order' AND purpose_id = $4`, [k.chainId, k.txRef, k.index, orderId]);
}

/**
 * The whole-transaction claim of a transaction the executor records before broadcasting it, as a
 * CTE body for the statement that inserts the settlement row (one statement: the claim exists
 * exactly when the transaction is recorded). Parameters `$chain`, `$tx` are placeholders the
 * caller numbers.
 */
export function wholeTxClaimInsertSql(chain: string, tx: string, purpose: string, purposeId: string): string {
  return `INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id)
          VALUES (${chain}, ${tx}, ${WHOLE_TX}, ${purpose}, ${purposeId}) ON CONFLICT DO NOTHING RETURNING 1`;
}
