import { formatUnits } from '@tollgate/protocol';
import type { Queryable } from '../../db/database.ts';
import { patchOrder } from '../../orders/repo.ts';
import type { CardOrderRow } from './columns.ts';
import { transitionOrder } from '../../orders/transition.ts';
import { emitRefunded } from '../../refunds/events.ts';
import { emitEvent } from '../../webhooks/outbox.ts';
import type { CardEvent } from './port.ts';
import * as repo from './repo.ts';
import { mayMove, mayMoveDispute, withHold, withoutHold, type DisputeStatus, type HoldReason } from './states.ts';

/**
 * Applying one normalized processor notification to a card order, inside the caller's
 * transaction (service.ts has already deduplicated it by event id), and settling the order
 * afterwards. Ordering is by object state, not arrival: states.ts ranks say which moves are
 * allowed, so a late `payment.succeeded` after a refund, or a late `dispute.opened` after the
 * dispute was lost, is recorded as `stale` and changes nothing.
 */
export interface Applied {
  outcome: 'processing' | 'declined' | 'succeeded' | 'duplicate_charge' | 'refunded' | 'refund_failed' | 'dispute' | 'stale' | 'duplicate' | 'unknown_order' | 'reference_conflict' | 'amount_conflict' | 'ignored';
  orderId?: string | undefined;
}

const live = (o: CardOrderRow) => o.status === 'CHECKOUT_VERIFIED' || o.status === 'PAYMENT_CONFIRMED';

async function setHolds(tx: Queryable, o: CardOrderRow, reasons: HoldReason[]): Promise<CardOrderRow> {
  return (await patchOrder(tx, o.id, o.status, { held_reasons: JSON.stringify(reasons) }))!;
}

export async function applyCardEvent(tx: Queryable, processor: string, orderId: string, ev: CardEvent, now: Date): Promise<Applied> {
  let o = await repo.lockOrder(tx, orderId);
  const cp = await repo.getCardPayment(tx, orderId);
  if (!o || !cp || cp.processor !== processor) return { outcome: 'unknown_order' };
  const done = (outcome: Applied['outcome']): Applied => ({ outcome, orderId });
  switch (ev.type) {
    case 'payment.processing': {
      if (cp.state === 'succeeded' || cp.state === 'refunded' || !mayMove(cp.state, 'processing')) return done('stale');
      await repo.updateCardPayment(tx, orderId, { state: 'processing', attempts: cp.attempts + 1, decline_code: null });
      if (live(o)) await patchOrder(tx, orderId, o.status, { payment_seen_at: now });
      return done('processing');
    }
    case 'payment.failed': {
      if (cp.state === 'succeeded' || cp.state === 'refunded') return done('stale');
      await repo.updateCardPayment(tx, orderId, { state: 'declined', decline_code: ev.declineCode ?? 'card_declined', attempts: cp.attempts + (cp.state === 'processing' ? 0 : 1) });
      // The payer may retry on the same order: nothing is under way any more.
      if (live(o)) await patchOrder(tx, orderId, o.status, { payment_seen_at: null });
      return done('declined');
    }
    case 'payment.succeeded': {
      if (cp.state === 'refunded') return done('stale');
      if (cp.state === 'succeeded') {
        const sameCharge = ev.paymentReference === cp.payment_reference && (ev.chargeId === undefined || ev.chargeId === cp.charge_id);
        if (sameCharge) return done('stale');
        await repo.updateCardPayment(tx, orderId, { charges: cp.charges + 1 });
        if (live(o)) await setHolds(tx, o, withHold(o.held_reasons, 'duplicate_payment'));
        return done('duplicate_charge');
      }
      // The reference becomes the one that succeeded: a processor may start with a hosted-page
      // session id (Stripe Checkout cs_…) and report the payment under its PaymentIntent (pi_…).
      // A reference that already belongs to another order cannot be this order's: recorded as
      // `reference_conflict` (the event row keeps it for the operator), nothing changes, and the
      // processor gets its 200 (a unique-index 500 here was retried by the processor forever).
      const owner = await repo.orderIdByReference(tx, processor, ev.paymentReference);
      if (owner !== undefined && owner !== orderId) return done('reference_conflict');
      await repo.updateCardPayment(tx, orderId, {
        state: 'succeeded',
        charges: 1,
        charge_id: ev.chargeId ?? null,
        decline_code: null,
        payment_reference: ev.paymentReference,
        card_brand: ev.cardBrand ?? null,
        card_last4: ev.cardLast4 ?? null,
      });
      if (live(o)) {
        // A success that does not say what was charged is not trusted either: held like a mismatch.
        const conflict = ev.amountMinor === undefined || ev.currency === undefined || ev.amountMinor !== BigInt(o.amount_wei) || ev.currency.toUpperCase() !== o.fiat_currency;
        o = (await patchOrder(tx, orderId, o.status, { payment_seen_at: now, payment_reference: ev.paymentReference }))!;
        if (conflict) await setHolds(tx, o, withHold(o.held_reasons, 'conflict'));
      }
      return done('succeeded');
    }
    case 'refund.succeeded':
    case 'refund.failed': {
      const status = ev.type === 'refund.succeeded' ? 'succeeded' : 'failed';
      // By the processor's refund id, else by Tollgate's (a notification may overtake the answer
      // of the refund call that would have recorded the processor's id).
      let r = ev.refundId ? await repo.refundByProcessorId(tx, ev.refundId) : undefined;
      if (!r && ev.refundKey) r = (await repo.listRefunds(tx, orderId)).find((x) => x.id === ev.refundKey);
      if (r && r.status !== 'pending') return done('stale');
      if (r) r = await repo.updateRefund(tx, r.id, { status, ...(ev.refundId && !r.processor_refund_id ? { processorRefundId: ev.refundId } : {}) });
      else if (status === 'succeeded' && ev.amountMinor) {
        // A refund made in the processor's own dashboard: recorded as the processor's, but only if
        // it fits what was charged, in the order's currency. Anything else (a signed refund of
        // 9,999,999.99 on a 7.00 order) is recorded on the event row for the operator, not applied.
        const before = (await repo.listRefunds(tx, orderId)).filter((x) => x.status === 'succeeded').reduce((t, x) => t + BigInt(x.amount), 0n);
        const chargedTotal = BigInt(o.amount_wei) * BigInt(Math.max(cp.charges, 1));
        const otherCurrency = ev.currency !== undefined && ev.currency.toUpperCase() !== o.fiat_currency;
        if (otherCurrency || ev.amountMinor < 0n || before + ev.amountMinor > chargedTotal) return done('amount_conflict');
        r = await repo.insertRefund(tx, { id: `rf_${ev.refundId ?? ev.id}`.slice(0, 64), orderId, merchantId: o.merchant_id, amount: ev.amountMinor, status, processorRefundId: ev.refundId, requestedBy: 'processor' });
      } else return done('stale');
      const refunds = await repo.listRefunds(tx, orderId);
      const refunded = refunds.filter((x) => x.status === 'succeeded').reduce((t, x) => t + BigInt(x.amount), 0n);
      const pending = refunds.some((x) => x.status === 'pending');
      const charged = BigInt(o.amount_wei) * BigInt(Math.max(cp.charges, 1));
      if (status === 'succeeded' && refunded >= charged && mayMove(cp.state, 'refunded')) await repo.updateCardPayment(tx, orderId, { state: 'refunded' });
      o = (await patchOrder(tx, orderId, o.status, { refunded_amount: refunded.toString() }))!;
      if (!pending && (o.held_reasons ?? []).includes('refund')) o = await setHolds(tx, o, withoutHold(o.held_reasons, 'refund'));
      if (status === 'succeeded') {
        const amount = ev.amountMinor ?? BigInt(refunds.find((x) => x.processor_refund_id === ev.refundId)?.amount ?? '0');
        const refundId = refunds.find((x) => x.processor_refund_id === ev.refundId)?.id;
        await emitEvent(tx, {
          merchantId: o.merchant_id,
          event: 'fiat.payment.refunded',
          orderId,
          clockNow: now,
          payload: { ...cardPayload(o, processor), ...(refundId ? { refund_id: refundId } : {}), amount: money(amount, o), refunded_total: money(refunded, o), order_status: o.status },
        });
        // The event of every rail (refunds/events.ts); fiat.payment.refunded stays for card integrations.
        if (r) await emitRefunded(tx, r, o, now);
      }
      return done(status === 'succeeded' ? 'refunded' : 'refund_failed');
    }
    case 'dispute.opened':
    case 'dispute.won':
    case 'dispute.lost': {
      const to = ev.type.slice('dispute.'.length) as DisputeStatus;
      if (!mayMoveDispute((o.dispute_status ?? null) as DisputeStatus | null, to)) return done('stale');
      o = (await patchOrder(tx, orderId, o.status, { dispute_status: to }))!;
      if (to === 'opened' && live(o)) o = await setHolds(tx, o, withHold(o.held_reasons, 'dispute'));
      if (to !== 'opened' && (o.held_reasons ?? []).includes('dispute')) o = await setHolds(tx, o, withoutHold(o.held_reasons, 'dispute'));
      await emitEvent(tx, {
        merchantId: o.merchant_id,
        event: 'fiat.dispute.updated',
        orderId,
        clockNow: now,
        // A lost dispute after INVOICED is reported here; the order does not regress.
        payload: { ...cardPayload(o, processor), dispute_status: to, amount: money(ev.amountMinor ?? BigInt(o.amount_wei), o), order_status: o.status },
      });
      return done('dispute');
    }
    default: {
      const never: never = ev.type;
      throw new Error(`unknown card event ${never as string}`);
    }
  }
}

/**
 * Brings the order in line with its card payment, in the caller's transaction:
 *  - each new success is announced (`fiat.payment.succeeded`, `held` = whether anything holds the
 *    order once this batch is applied) before any order event;
 *  - a succeeded payment with nothing holding it invoices the order (order.invoiced, session
 *    COMPLETED + quickpay.checkout.completed through transition.ts); with a hold it is parked in
 *    PAYMENT_CONFIRMED, which emits neither completion event;
 *  - a fully refunded payment, or a lost dispute, fails an order not yet invoiced; an INVOICED
 *    order never regresses (the refund / dispute events report it);
 *  - a decline that arrives once the window has ended (the payment was processing until then)
 *    fails the order: a processing payment is never expired under the payer (service.expireDue
 *    skips it), it ends when the processor answers.
 */
export async function settleOrder(tx: Queryable, orderId: string, now: Date, successes: readonly CardEvent[]): Promise<void> {
  const o = await repo.lockOrder(tx, orderId);
  const cp = await repo.getCardPayment(tx, orderId);
  if (!o || !cp) return;
  const held = (o.held_reasons ?? []).length > 0;
  for (const ev of successes) {
    await emitEvent(tx, {
      merchantId: o.merchant_id,
      event: 'fiat.payment.succeeded',
      orderId,
      clockNow: now,
      payload: {
        ...cardPayload(o, cp.processor),
        payment_reference: ev.paymentReference,
        amount: ev.amountMinor !== undefined ? money(ev.amountMinor, o) : o.fiat_amount,
        // held: not (yet) fulfillable — parked with a reason, or paid after the order closed (refund it)
        held: live(o) ? held : o.status !== 'INVOICED',
        ...(ev.paymentReference !== cp.payment_reference || (ev.chargeId !== undefined && ev.chargeId !== cp.charge_id) ? { duplicate: true } : {}),
      },
    });
  }
  const detail = { card_payment: cp.state, held_reasons: o.held_reasons ?? [] };
  // Money gone back to the payer before the order was invoiced: fail it (never after INVOICED).
  if (live(o) && (cp.state === 'refunded' || o.dispute_status === 'lost')) {
    const reason = cp.state === 'refunded' ? 'card payment refunded before the order was invoiced' : 'card dispute lost before the order was invoiced';
    await transitionOrder(tx, { orderId, from: o.status as 'CHECKOUT_VERIFIED' | 'PAYMENT_CONFIRMED', trigger: 'fail', patch: { failure_reason: reason }, detail, now });
  } else if (cp.state === 'succeeded' && o.status === 'CHECKOUT_VERIFIED') {
    const patch = held ? { confirmed_at: now } : { confirmed_at: now, invoiced_at: now };
    await transitionOrder(tx, { orderId, from: 'CHECKOUT_VERIFIED', trigger: held ? 'confirm' : 'invoice', patch, detail, now });
  } else if (cp.state === 'succeeded' && o.status === 'PAYMENT_CONFIRMED' && !held) {
    await transitionOrder(tx, { orderId, from: 'PAYMENT_CONFIRMED', trigger: 'invoice', patch: { invoiced_at: now }, detail, now });
  } else if (cp.state === 'declined' && o.status === 'CHECKOUT_VERIFIED' && now.getTime() >= o.expires_at.getTime()) {
    // The processor declined a payment it was still processing when the window ended. The payer
    // cannot retry on a closed window, so the attempt ends here, as FAILED (the processor said
    // no), not EXPIRED (which would read as "nobody paid"); its session ends FAILED too.
    await transitionOrder(tx, { orderId, from: 'CHECKOUT_VERIFIED', trigger: 'fail', patch: { failure_reason: 'card payment declined after the payment window ended' }, detail, now });
  }
}

/** The fields every card event payload starts with (`fiat.payment.succeeded`, docs/webhooks.md). */
function cardPayload(o: CardOrderRow, processor: string) {
  return {
    order_id: o.id,
    ...(o.checkout_id ? { checkout_id: o.checkout_id } : {}),
    processor,
    payment_reference: o.payment_reference ?? '',
    currency: o.fiat_currency ?? '',
    amount: o.fiat_amount ?? '',
  };
}

function money(minor: bigint, o: CardOrderRow): string {
  return formatUnits(minor, o.decimals, o.decimals);
}
