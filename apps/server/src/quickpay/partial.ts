import { askNode, finalityOf } from '../orders/finality.ts';
import { finalityRule } from '../chain/order-ports.ts';
import * as orders from '../orders/transfers-repo.ts';
import { FeeBalanceShortError, transitionOrder } from '../orders/transition.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { listSummableSessions } from './repo.ts';

/** Attribution records late payments against closed orders for 7 days; a day more covers clock skew. */
const SUMMING_WINDOW_MS = 8 * 86_400_000;

/**
 * A quick-pay session paid in several transfers (docs/quickpay.md "Payment in two transfers").
 *
 * The attribution rule is unchanged: each short transfer from the session's payer is recorded
 * against the session's order as `underpaid` (or `late` after the window) and pays nothing by
 * itself, so it can never pay another order. This worker does, for quick-pay sessions only, what
 * the merchant's accept does for one transfer (orders/accept.ts): under the order's row lock, it
 * takes the recorded, unaccepted, non-orphaned short payments in the order they were recorded
 * until they reach the amount; once every one of them is final (as the family of the order's chain
 * decides, orders/finality.ts: EVM depth under the watcher's cursor, Solana `finalized`), the order moves to INVOICED by the `accept` trigger with the last transfer as
 * its payment, `paid_amount_wei` = the sum, and every summed transfer in the audit detail (and
 * marked accepted). The quick-pay hook then sends `quickpay.checkout.completed` once.
 *
 * Returns how many sessions it completed. A fee balance too short for a late capture leaves the
 * order as it is (retried on the next tick).
 */
export async function settleSummedPayments(deps: { db: Database; clock: Clock; config: Config }, limit = 100): Promise<number> {
  const { db, clock, config } = deps;
  const due = await listSummableSessions(db, new Date(clock.now() - SUMMING_WINDOW_MS), limit);
  let n = 0;
  for (const d of due) {
    try {
      // A node's answer (commitment families) is read before the transaction: orders/finality.ts.
      const rule = finalityRule(config, d.chain_id);
      const nodeFinal = await askNode(rule, rule?.unit === 'commitment' ? (await orders.listRecordedTransfers(db, d.order_id)).filter((t) => t.accepted_at === null).map((t) => t.tx_hash) : []);
      const done = await db.transaction(async (tx) => {
        const o = await orders.lockOrderForMerchant(tx, d.merchant_id, d.order_id);
        if (!o || o.transfer_id !== null || !(o.status === 'CHECKOUT_VERIFIED' || o.status === 'EXPIRED' || o.status === 'CANCELLED')) return false;
        const amount = BigInt(o.amount_wei);
        const used: orders.RecordedTransfer[] = [];
        let sum = 0n;
        for (const t of await orders.listRecordedTransfers(tx, o.id)) {
          if (t.accepted_at !== null) continue;
          used.push(t);
          sum += BigInt(t.amount_wei);
          if (sum >= amount) break;
        }
        if (sum < amount) return false;
        const scanned = await orders.scannedBlock(tx, o.chain_id);
        const finality = (t: orders.RecordedTransfer) => finalityOf(rule, t, scanned, nodeFinal);
        if (used.some((t) => !finality(t).final)) return false;
        const last = used[used.length - 1]!;
        const now = new Date(clock.now());
        const row = await transitionOrder(tx, {
          orderId: o.id,
          from: o.status,
          trigger: 'accept',
          now,
          patch: {
            transfer_id: last.id,
            tx_hash: last.tx_hash,
            log_index: last.log_index,
            block_number: last.block_number,
            block_hash: last.block_hash,
            paid_amount_wei: sum.toString(),
            confirmations: finality(last).confirmations,
            payment_seen_at: last.seen_at,
            confirmed_at: now,
            invoiced_at: now,
          },
          detail: { summed: used.map((t) => ({ tx_hash: t.tx_hash, log_index: t.log_index, amount_wei: t.amount_wei, kind: t.match_status })), quickpay_session_id: d.session_id },
        });
        if (!row) throw new Error(`order ${o.id} changed state while locked for summing`);
        for (const t of used) await orders.markTransferAccepted(tx, t.id, now);
        return true;
      });
      if (done) n++;
    } catch (err) {
      if (!(err instanceof FeeBalanceShortError)) throw err;
    }
  }
  return n;
}
