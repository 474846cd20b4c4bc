import type { Database } from '../db/database.ts';
import { claimHolder } from './claims.ts';
import { askNode, finalityOf, type FinalityRule } from './finality.ts';
import * as repo from './repo.ts';
import * as transfers from './transfers-repo.ts';
import { FeeBalanceShortError, transitionOrder } from './transition.ts';

/**
 * The merchant accepts a late or under-payment recorded against one of its orders
 * (`POST /api/v1/orders/{id}/accept-payment`, docs/attribution.md): the order becomes INVOICED by
 * that transfer, through the one transition function (audit row, fee capture, events).
 *
 * Rules, all checked under the order's row lock so two accepts, an accept and the watcher, or an
 * accept and the expiry sweeper serialize:
 *  - only a `late` or `underpaid` transfer that is still on the chain (not orphaned by a reorg);
 *    a duplicate payment of an already paid order has nothing to move;
 *  - only from CHECKOUT_VERIFIED with no payment seen, EXPIRED or CANCELLED: an order whose own
 *    payment is confirming, or FAILED, is left to its flow;
 *  - only once the transfer is final, as its chain's family decides (orders/finality.ts). EVM:
 *    `finality_confirmations` deep under the watcher's cursor. The cursor is hash-checked every
 *    tick and a reorg below it orphans the transfer before the cursor moves on, so a transfer that
 *    deep and not orphaned is as final as the watcher's own invoicing (which uses the same depth).
 *    Solana: the node reports the transaction `finalized` (asked before the row lock);
 *  - repeating the accept of the transfer that invoiced the order answers the same order again
 *    (idempotent), never a second transition (order_transitions allows INVOICED once).
 */

export type AcceptOutcome =
  | { kind: 'accepted'; order: repo.OrderRow; repeated: boolean }
  | { kind: 'not_found' }
  | { kind: 'nothing'; reason: string }
  | { kind: 'ambiguous'; count: number }
  | { kind: 'not_final'; confirmations: number; needed: number; level?: 'finalized' }
  | { kind: 'fee_short' };

export interface AcceptArgs {
  merchantId: string;
  orderId: string;
  /** Which recorded transfer; optional when exactly one can be accepted. */
  txHash?: string | undefined;
  logIndex?: number | undefined;
  /** The stored form of a transaction reference on a chain (its family's planner, orders/ports.ts transactionRef). */
  txRef: (chainId: number, raw: string) => string;
  /** The finality rule of a configured chain (the order service's port, chain/order-ports.ts finalityRule), undefined for an unknown chain. */
  finality: (chainId: number) => FinalityRule | undefined;
  now: Date;
}

/**
 * @example
 * const out = await acceptPayment(db, { merchantId, orderId, finality: () => ({ unit: 'blocks', needed: 4 }), now: new Date() });
 * if (out.kind === 'accepted') console.log(out.order.status); // 'INVOICED'
 */
export async function acceptPayment(db: Database, a: AcceptArgs): Promise<AcceptOutcome> {
  // A node's answer (commitment families) is read before the transaction: see orders/finality.ts.
  const pre = await repo.getOrderForMerchant(db, a.merchantId, a.orderId);
  const rule = pre ? a.finality(pre.chain_id) : undefined;
  const nodeFinal = pre
    ? await askNode(
        rule,
        (await transfers.listRecordedTransfers(db, pre.id)).filter((t) => t.accepted_at === null).map((t) => t.tx_hash),
      )
    : new Set<string>();
  try {
    return await db.transaction(async (tx): Promise<AcceptOutcome> => {
      const o = await transfers.lockOrderForMerchant(tx, a.merchantId, a.orderId);
      if (!o) return { kind: 'not_found' };
      const txHash = a.txHash === undefined ? undefined : a.txRef(o.chain_id, a.txHash);
      const chosen = (await transfers.listRecordedTransfers(tx, o.id)).filter((t) => (txHash === undefined || t.tx_hash === txHash) && (a.logIndex === undefined || t.log_index === a.logIndex));
      if (o.status === 'INVOICED') {
        const same = chosen.find((t) => t.accepted_at !== null && Number(o.transfer_id) === t.id);
        return same ? { kind: 'accepted', order: o, repeated: true } : { kind: 'nothing', reason: 'the order is already INVOICED by its own payment' };
      }
      const acceptable = o.status === 'EXPIRED' || o.status === 'CANCELLED' || (o.status === 'CHECKOUT_VERIFIED' && o.transfer_id === null);
      if (!acceptable) {
        const why = o.status === 'FAILED' ? 'the order FAILED' : 'a payment of the order is already confirming';
        return { kind: 'nothing', reason: `${why} (current state: ${o.status})` };
      }
      const open = chosen.filter((t) => t.accepted_at === null);
      if (open.length === 0) return { kind: 'nothing', reason: 'no late or under-payment is recorded against this order (or a reorg removed it)' };
      if (open.length > 1) return { kind: 'ambiguous', count: open.length };
      const t = open[0]!;
      // Defence in depth: only a transfer this order holds in the claims ledger can pay it (the
      // watcher never records another purpose's transfer against an order; rows from before the
      // ledger were claimed by its migration).
      const holder = await claimHolder(tx, { chainId: o.chain_id, txRef: t.tx_hash, index: t.log_index });
      if (holder?.purpose !== 'order' || holder.purposeId !== o.id) {
        return { kind: 'nothing', reason: 'the transfer recorded against this order is claimed by another purpose (docs/attribution.md)' };
      }

      const f = finalityOf(rule, t, await transfers.scannedBlock(tx, o.chain_id), nodeFinal);
      if (!f.final) return { kind: 'not_final', confirmations: f.confirmations, needed: f.needed, ...(f.level ? { level: f.level } : {}) };

      const row = await transitionOrder(tx, {
        orderId: o.id,
        from: o.status,
        trigger: 'accept',
        now: a.now,
        patch: {
          transfer_id: t.id,
          tx_hash: t.tx_hash,
          log_index: t.log_index,
          block_number: t.block_number,
          block_hash: t.block_hash,
          paid_amount_wei: t.amount_wei,
          confirmations: f.confirmations,
          payment_seen_at: t.seen_at,
          confirmed_at: a.now,
          invoiced_at: a.now,
        },
        detail: { accepted: t.match_status, tx_hash: t.tx_hash, log_index: t.log_index, block_number: t.block_number, block_hash: t.block_hash, amount_wei: t.amount_wei },
      });
      // Cannot be lost: the row is locked and its status was just read.
      if (!row) throw new Error(`order ${o.id} changed state while locked for accept`);
      await transfers.markTransferAccepted(tx, t.id, a.now);
      return { kind: 'accepted', order: row, repeated: false };
    });
  } catch (err) {
    if (err instanceof FeeBalanceShortError) return { kind: 'fee_short' };
    throw err;
  }
}
