import type { Queryable } from '../../db/database.ts';
import { CHAIN_CLOCK_SKEW_MS } from '../../orders/claims.ts';
import type { OrderRow } from '../../orders/repo.ts';
import { depthOf } from '../../orders/states.ts';
import { emitRefunded } from '../../refunds/events.ts';
import * as refunds from '../../refunds/repo.ts';
import { mapLimit, type WatchContext } from './context.ts';
import type { BlockRef, TransferLog } from './rpc.ts';

/**
 * DIRECT refunds on an EVM chain (docs/refunds.md): the merchant records a refund (refunds/service.ts),
 * then sends the tokens from the wallet that was paid to the payer. The watcher
 *  1. also watches the payees of pending DIRECT refunds (scan.ts `listWatchedAddresses`);
 *  2. before attributing a new transfer as a payment, links it to the oldest pending refund with the
 *     same chain, token, sender, payee and exact amount, recorded before the block (`linkRefundTransfer`)
 *     and CLAIMS it for that refund in the claims ledger (transfer_claims, purpose `refund`): payment
 *     attribution then sees the transfer held and records it as `claimed`, so a refund transfer is
 *     never credited as a payment;
 *  3. at `confirmations` deep, with the block still canonical, marks the refund succeeded, updates the
 *     order's refunded_amount and emits `order.refunded` in one transaction (`confirmRefunds`);
 *  4. a reorg that orphans the transfer unlinks it (`unlinkOrphanedRefund`): pending again.
 */

/**
 * The payees (lowercase) of the chain's pending DIRECT refunds not yet linked to a transfer: only a
 * transfer to one of them can pay a refund back, so the scan asks `linkRefundTransfer` about no
 * other (one query per scanned range instead of one per recorded transfer).
 */
export async function pendingRefundPayees(q: Queryable, chainId: number): Promise<ReadonlySet<string>> {
  const { rows } = await q.query<{ to_address: string }>(`SELECT DISTINCT to_address FROM refunds WHERE rail = 'direct' AND status = 'pending' AND chain_id = $1 AND transfer_id IS NULL`, [chainId]);
  return new Set(rows.map((r) => r.to_address.toLowerCase()));
}

/**
 * Links a newly recorded transfer to a pending DIRECT refund it pays back, claiming it; returns the
 * refund id, or undefined when it is no refund (attribution then goes on as before).
 */
export async function linkRefundTransfer(tx: Queryable, t: TransferLog & { id: number; chainId: number; blockTime: Date }): Promise<string | undefined> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM refunds
      WHERE rail = 'direct' AND status = 'pending' AND transfer_id IS NULL AND chain_id = $1 AND token_contract = $2
        AND from_address = $3 AND to_address = $4 AND amount = $5 AND created_at <= $6
      ORDER BY created_at, id LIMIT 1
      FOR UPDATE SKIP LOCKED`,
    [t.chainId, t.token.toLowerCase(), t.from.toLowerCase(), t.to.toLowerCase(), t.value.toString(), new Date(t.blockTime.getTime() + CHAIN_CLOCK_SKEW_MS)],
  );
  const r = rows[0];
  if (!r) return undefined;
  const { rows: claimed } = await tx.query(
    `INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer)
     VALUES ($1, $2, $3, 'refund', $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1`,
    [t.chainId, t.txHash.toLowerCase(), t.logIndex, r.id, t.value.toString(), t.from.toLowerCase()],
  );
  // Already claimed by another purpose (never expected: a transfer to a payer pays nothing): left alone.
  if (claimed.length === 0) return undefined;
  await refunds.updateRefund(tx, r.id, { txHash: t.txHash.toLowerCase(), transferId: t.id });
  return r.id;
}

/** A reorg orphaned transfer `transferId`: a DIRECT refund it paid back waits for a transfer again. */
export async function unlinkOrphanedRefund(tx: Queryable, transferId: number): Promise<void> {
  const { rows } = await tx.query<{ id: string; order_id: string; status: string }>(
    `UPDATE refunds SET transfer_id = NULL, tx_hash = NULL, status = 'pending', completed_at = NULL, updated_at = now()
      WHERE transfer_id = $1 AND rail = 'direct' RETURNING id, order_id`,
    [transferId],
  );
  for (const r of rows) {
    await tx.query(`DELETE FROM transfer_claims WHERE purpose = 'refund' AND purpose_id = $1`, [r.id]);
    await refunds.syncRefundedAmount(tx, r.order_id);
  }
}

/**
 * Step 3 at `head`: linked refunds whose transfer is `confirmations` deep and whose block still has
 * the recorded hash succeed. Returns the lowest block whose hash changed (the watcher rewinds).
 */
export async function confirmRefunds(ctx: WatchContext, head: BlockRef): Promise<{ confirmed: number; reorgAt?: bigint }> {
  const { db, chain, rpc } = ctx;
  const { rows } = await db.query<{ id: string; block_number: number; block_hash: string }>(
    `SELECT r.id, t.block_number, t.block_hash FROM refunds r JOIN chain_transfers t ON t.id = r.transfer_id
      WHERE r.rail = 'direct' AND r.status = 'pending' AND r.chain_id = $1 AND t.orphaned_at IS NULL
      ORDER BY t.block_number, r.id LIMIT 500`,
    [chain.chainId],
  );
  const out: { confirmed: number; reorgAt?: bigint } = { confirmed: 0 };
  const deep = rows.filter((r) => depthOf(BigInt(r.block_number), head.number) >= chain.confirmations);
  if (deep.length === 0) return out;
  const numbers = [...new Set(deep.map((r) => BigInt(r.block_number)))];
  const blocks = await mapLimit(numbers, 8, (n) => (n === head.number ? Promise.resolve(head) : rpc.getBlock(n)));
  const hashAt = new Map(numbers.map((n, i) => [n, blocks[i]?.hash]));
  const now = new Date(ctx.clock.now());
  for (const r of deep) {
    const bn = BigInt(r.block_number);
    const canonical = hashAt.get(bn);
    if (canonical === undefined) continue;
    if (canonical !== r.block_hash) {
      if (out.reorgAt === undefined || bn < out.reorgAt) out.reorgAt = bn;
      continue;
    }
    const done = await db.transaction(async (tx) => {
      // Re-read under lock: a rewind may have unlinked it since the SELECT above.
      const { rows: cur } = await tx.query<refunds.RefundRow>(`SELECT * FROM refunds WHERE id = $1 AND status = 'pending' AND transfer_id IS NOT NULL FOR UPDATE`, [r.id]);
      if (!cur[0]) return false;
      const refund = (await refunds.updateRefund(tx, r.id, { status: 'succeeded' }))!;
      await refunds.syncRefundedAmount(tx, refund.order_id);
      const order = (await tx.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [refund.order_id])).rows[0]!;
      await emitRefunded(tx, refund, order, now);
      return true;
    });
    if (done) out.confirmed++;
  }
  return out;
}
