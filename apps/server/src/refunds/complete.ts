import type { Database } from '../db/database.ts';
import type { OrderRow } from '../orders/repo.ts';
import { emitRefunded } from './events.ts';
import * as repo from './repo.ts';

/**
 * Finishes the DELEGATE refunds whose executor transaction is mined or failed (called by the
 * settlement worker each tick, after it synced fee-bumped refund hashes): succeeded with the mined
 * transaction, the order's `refunded_amount` and `order.refunded` in one transaction; or failed.
 * Returns the number finished.
 */
export async function finishDelegateRefunds(db: Database, chainId: number, now: Date, limit = 50): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await repo.finishedDelegateRefunds(tx, chainId, limit);
    for (const r of rows) {
      const ok = r.outcome === 'confirmed';
      const done = (await repo.updateRefund(tx, r.id, { status: ok ? 'succeeded' : 'failed', ...(r.mined_tx_hash ? { txHash: r.mined_tx_hash } : {}) }))!;
      if (r.mined_tx_hash && done.tx_hash !== r.mined_tx_hash) await tx.query('UPDATE refunds SET tx_hash = $2 WHERE id = $1', [r.id, r.mined_tx_hash]);
      if (!ok) continue;
      await repo.syncRefundedAmount(tx, r.order_id);
      const order = (await tx.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [r.order_id])).rows[0]!;
      await emitRefunded(tx, { ...done, tx_hash: r.mined_tx_hash ?? done.tx_hash }, order, now);
    }
    return rows.length;
  });
}
