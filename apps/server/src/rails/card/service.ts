import { formatUnits, isId, newId } from '@tollgate/protocol';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import type { MerchantService } from '../../merchants/service.ts';
import type { Queryable } from '../../db/database.ts';
import * as checkoutRepo from '../../checkout/repo.ts';
import { hostedUrl } from '../../checkout/service.ts';
import { effectiveStatus, isLiveOrder, isPayable } from '../../checkout/states.ts';
import type { CardOrderRow } from './columns.ts';
import { patchOrder } from '../../orders/repo.ts';
import { transitionOrder } from '../../orders/transition.ts';
import { flowOf, isCardFlow, type CardEvent, type CardProcessor, type NotificationHeaders } from './port.ts';
import * as repo from './repo.ts';
import { applyCardEvent, settleOrder, type Applied } from './apply.ts';
import { MIN_CARD_WINDOW_SECONDS, withHold, withoutHold, type HoldReason } from './states.ts';
import { ensureStarted, refused, startCardPayment, toMinor, type CardOrderRequest, type Refused, type StartContext, type StartResult } from './start.ts';
export type { CardOrderRequest } from './start.ts';

export type StartOutcome = Exclude<StartResult, { kind: 'retry' }> | { kind: 'not_found' };
export type RefundOutcome = { kind: 'refunded'; refund: repo.CardRefundRow; order: CardOrderRow } | { kind: 'not_found' } | Refused;
export type HoldOutcome = { kind: 'ok'; order: CardOrderRow } | { kind: 'not_found' } | Refused;

/** What the card rail is built from (the composition root's deps). */
export interface CardContext {
  db: Database;
  config: Config;
  clock: Clock;
  merchants: MerchantService;
}

/**
 * The card rail: starts card payments for checkout sessions, applies the processor's
 * notifications (normalized CardEvents, deduplicated by event id), refunds, and lets the operator
 * hold and release card orders. Every order status change goes through orders/transition.ts (in
 * apply.ts); the processor is reached only through the port (port.ts).
 */
export class CardService {
  private readonly deps: CardContext;
  readonly processor: CardProcessor | undefined;
  constructor(
    deps: CardContext,
    /** undefined: no card processor in this deployment (card starts answer 503) */
    processor: CardProcessor | undefined,
  ) {
    this.deps = deps;
    this.processor = processor;
  }

  /**
   * Starts (or resumes) the card payment of a checkout session: creates the session's
   * FIAT_<PROCESSOR> order (fee reserved like any order) and asks the processor for the payment.
   * The live card order of the session is returned again (a declined payer retries on it); a live
   * crypto order refuses (409), so do too little time left or a closed session (410).
   */
  async startForSession(checkoutId: string): Promise<StartOutcome> {
    if (!isId('cs', checkoutId)) return { kind: 'not_found' };
    const { db, clock, config, merchants } = this.deps;
    for (let attempt = 0; attempt < 3; attempt++) {
      const v = await checkoutRepo.getSessionWithOrder(db, checkoutId);
      if (!v) return { kind: 'not_found' };
      const { session: s, order: o } = v;
      const now = clock.now();
      const status = effectiveStatus({ status: s.status, expiresAt: s.expires_at }, o && { status: o.status, paymentSeen: o.payment_seen }, now);
      if (status === 'EXPIRED') return refused('session_expired', 'the checkout session expired; start no new payment on it');
      if (!isPayable(status)) return refused('session_not_payable', `the checkout session is ${status}; start no new payment on it`);
      if (!s.payment_rails.includes('fiat') || !s.fiat_currency || !s.fiat_amount) return refused('rail_not_enabled', 'this checkout session offers no card payment');
      const m = await merchants.getMerchant(s.merchant_id);
      if (!m?.card_enabled) return refused('rail_not_enabled', 'the card rail is not enabled for this merchant');
      const p = this.processor;
      if (!p) return refused('card_processor_unavailable', 'no card processor is configured in this deployment');

      if (o && isLiveOrder(o.status)) {
        if (!isCardFlow(o.flow)) return refused('card_payment_active', 'a crypto payment is live for this checkout session; finish or let it expire before paying by card');
        return { kind: 'started', created: false, start: await ensureStarted(this.ctx(), o.id, hostedUrl(config.publicBaseUrl, s.id)) };
      }
      if (s.expires_at.getTime() - now < MIN_CARD_WINDOW_SECONDS * 1000) {
        return refused('session_not_payable', `less than ${MIN_CARD_WINDOW_SECONDS} s are left on this checkout session: too little time to start a card payment`);
      }
      const out = await startCardPayment(this.ctx(), {
        merchantId: s.merchant_id,
        dappOrderId: `checkout:${s.id}:${v.orderCount + 1}`,
        currency: s.fiat_currency,
        amount: s.fiat_amount,
        // The card payment window is the session's: a card session has no shorter order TTL.
        expiresAt: s.expires_at,
        checkoutId: s.id,
        returnUrl: hostedUrl(config.publicBaseUrl, s.id),
        link: async (tx, orderId) => {
          const locked = await checkoutRepo.lockSession(tx, s.id);
          if (locked?.status !== 'OPEN') return false;
          await checkoutRepo.linkCardOrder(tx, s.id, orderId);
          return true;
        },
      });
      // A concurrent start made order n first, or the session moved: re-read and answer from it.
      if (out.kind === 'retry') continue;
      return out;
    }
    return refused('card_payment_active', 'the checkout session changed concurrently; read it again before retrying');
  }

  /**
   * Starts a card payment for any caller that owns an order slot (checkout sessions here; quick-pay
   * sessions next): creates the FIAT_<PROCESSOR> order with its fee reserved and asks the
   * processor for the payment. See start.ts.
   */
  startCardPayment(req: CardOrderRequest): Promise<StartResult> {
    return startCardPayment(this.ctx(), req);
  }

  private ctx(): StartContext {
    return { db: this.deps.db, config: this.deps.config, processor: this.processor };
  }

  /** The card order of a checkout session that a payer may pay now (TEST card form). */
  async payableOrderOfSession(checkoutId: string): Promise<{ order: CardOrderRow; payment: repo.CardPaymentRow } | undefined> {
    if (!isId('cs', checkoutId)) return undefined;
    const v = await checkoutRepo.getSessionWithOrder(this.deps.db, checkoutId);
    if (!v?.order || !isCardFlow(v.order.flow)) return undefined;
    const order = (await this.deps.db.query<CardOrderRow>('SELECT * FROM orders WHERE id = $1', [v.order.id])).rows[0]!;
    const payment = await repo.getCardPayment(this.deps.db, order.id);
    return payment ? { order, payment } : undefined;
  }

  /** A card order and its payment by order id (quick-pay sessions own their card order directly). */
  async payableOrder(orderId: string): Promise<{ order: CardOrderRow; payment: repo.CardPaymentRow } | undefined> {
    const order = (await this.deps.db.query<CardOrderRow>('SELECT * FROM orders WHERE id = $1', [orderId])).rows[0];
    if (!order || !isCardFlow(order.flow)) return undefined;
    const payment = await repo.getCardPayment(this.deps.db, order.id);
    return payment ? { order, payment } : undefined;
  }

  /**
   * A processor's notification over HTTP: verified by the processor's own check on the raw body,
   * then applied (deduplicated by event id). `processor` is the path segment (`stripe`, `test`).
   */
  async handleNotification(processor: string, rawBody: string, headers: NotificationHeaders): Promise<{ kind: 'applied'; outcomes: string[] } | { kind: 'not_found' } | { kind: 'invalid'; reason: string }> {
    const p = this.processor;
    if (!p?.parseNotification || p.name.toLowerCase() !== processor.toLowerCase()) return { kind: 'not_found' };
    const parsed = p.parseNotification(rawBody, headers, this.deps.clock.now());
    if (!parsed.ok) return { kind: 'invalid', reason: parsed.reason };
    const bad = parsed.events.map(unstorable).find((x) => x !== undefined);
    if (bad) return { kind: 'invalid', reason: bad };
    const applied = await this.applyEvents(p.name, parsed.events);
    return { kind: 'applied', outcomes: applied.map((a) => a.outcome) };
  }

  /**
   * Reconciliation after downtime: the processor's events after the saved cursor, applied in
   * order (already-applied ones are recognised by id), then the cursor moves. Returns how many
   * events were read.
   */
  async reconcile(): Promise<number> {
    const p = this.processor;
    if (!p?.listEventsSince) return 0;
    const { db } = this.deps;
    const { events, cursor } = await p.listEventsSince(await repo.getCursor(db, p.name));
    await this.applyEvents(p.name, events);
    if (cursor) await repo.setCursor(db, p.name, cursor);
    return events.length;
  }

  /**
   * Applies processor notifications, each at most once (card_events keyed by the processor's
   * event id), in one transaction per event. Returns what each did.
   */
  async applyEvents(processor: string, events: readonly CardEvent[]): Promise<Applied[]> {
    const out: Applied[] = [];
    for (const ev of events) out.push(await this.deps.db.transaction((tx) => this.applyInTx(tx, processor, [ev])));
    return out;
  }

  /**
   * Applies several notifications in ONE transaction and settles the order once at the end: the
   * TEST processor reports a double charge this way, so the order is held before anything is
   * invoiced.
   */
  async applyBatch(processor: string, events: readonly CardEvent[]): Promise<Applied> {
    return this.deps.db.transaction((tx) => this.applyInTx(tx, processor, events));
  }

  private async applyInTx(tx: Queryable, processor: string, events: readonly CardEvent[]): Promise<Applied> {
    const now = new Date(this.deps.clock.now());
    let last: Applied = { outcome: 'ignored' };
    let orderId: string | undefined;
    const successes: CardEvent[] = [];
    for (const ev of events) {
      const id = ev.orderId ?? (await repo.orderIdByReference(tx, processor, ev.paymentReference));
      if (!(await repo.recordCardEvent(tx, { processor, eventId: ev.id, type: ev.type, orderId: id, outcome: 'pending' }))) {
        last = { outcome: 'duplicate', orderId: id };
        continue;
      }
      if (!id) {
        await repo.setCardEventOutcome(tx, processor, ev.id, 'unknown_order');
        last = { outcome: 'unknown_order' };
        continue;
      }
      last = await applyCardEvent(tx, processor, id, ev, now);
      await repo.setCardEventOutcome(tx, processor, ev.id, last.outcome);
      if (last.outcome === 'succeeded' || last.outcome === 'duplicate_charge') successes.push(ev);
      orderId = id;
    }
    if (orderId) await settleOrder(tx, orderId, now, successes);
    return last;
  }

  /**
   * Refunds (part of) a paid card order through the processor. The refund is recorded first
   * (pending), then sent with its id as idempotency key, then recorded as the processor answered;
   * a refund of an order not yet invoiced holds it (`refund`) until the refund settles.
   */
  async refund(a: { merchantId?: string | undefined; orderId: string; amount?: string | undefined; reason?: string | undefined; by: 'merchant' | 'operator' }): Promise<RefundOutcome> {
    const { db } = this.deps;
    const p = this.processor;
    const prep = await db.transaction(async (tx): Promise<RefundOutcome | { kind: 'prepared'; refund: repo.CardRefundRow; reference: string }> => {
      const o = await repo.lockOrder(tx, a.orderId);
      if (!o || (a.merchantId !== undefined && o.merchant_id !== a.merchantId)) return { kind: 'not_found' };
      if (!isCardFlow(o.flow)) return refused('card_order_not_refundable', 'only card orders are refunded here; a crypto payment is refunded on chain by the merchant');
      const cp = await repo.getCardPayment(tx, o.id);
      if (cp?.state !== 'succeeded' || !cp.payment_reference) return refused('card_order_not_refundable', `the card payment of this order is ${cp?.state ?? 'unknown'}, not succeeded`);
      if (!p || flowOf(p.name) !== o.flow) return refused('card_processor_unavailable', `the processor of this order (${o.flow}) is not configured`);
      const refunds = await repo.listRefunds(tx, o.id);
      const taken = refunds.filter((r) => r.status !== 'failed').reduce((t, r) => t + BigInt(r.amount), 0n);
      const remaining = BigInt(o.amount_wei) - taken;
      let amount = remaining;
      if (a.amount !== undefined) {
        try {
          amount = toMinor(a.amount, o.decimals);
        } catch {
          return refused('invalid_amount', `amount must be a positive decimal with at most ${o.decimals} fraction digits`, 'amount');
        }
        if (amount <= 0n) return refused('invalid_amount', 'amount must be positive', 'amount');
      }
      if (remaining <= 0n) return refused('card_order_not_refundable', 'the payment of this order is already fully refunded');
      if (amount > remaining) return refused('refund_exceeds_payment', `at most ${formatUnits(remaining, o.decimals, o.decimals)} ${o.fiat_currency} remains to refund`, 'amount');
      const refund = await repo.insertRefund(tx, { id: newId('rf'), orderId: o.id, merchantId: o.merchant_id, amount, status: 'pending', reason: a.reason, requestedBy: a.by });
      if (o.status === 'PAYMENT_CONFIRMED') await patchOrder(tx, o.id, o.status, { held_reasons: JSON.stringify(withHold(o.held_reasons, 'refund')) });
      return { kind: 'prepared', refund, reference: cp.payment_reference };
    });
    if (prep.kind !== 'prepared') return prep;
    let result;
    try {
      result = await p!.refund({ paymentReference: prep.reference, orderId: a.orderId, refundId: prep.refund.id, amountMinor: BigInt(prep.refund.amount), idempotencyKey: `tollgate-refund-${prep.refund.id}` });
    } catch (err) {
      // Unknown outcome: the refund stays pending; a retry (same idempotency key) or the
      // processor's notification settles it.
      return refused('card_processor_unavailable', `the processor did not answer the refund: ${(err as Error).message}`);
    }
    await db.transaction(async (tx) => {
      await repo.updateRefund(tx, prep.refund.id, { processorRefundId: result.refundId });
    });
    if (result.status !== 'pending') {
      await this.applyEvents(this.processor!.name, [
        {
          id: `tollgate:${prep.refund.id}:${result.status}`,
          type: result.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
          orderId: a.orderId,
          paymentReference: prep.reference,
          refundId: result.refundId,
          refundKey: prep.refund.id,
          amountMinor: BigInt(prep.refund.amount),
          created: Math.floor(this.deps.clock.now() / 1000),
        },
      ]);
    }
    const refund = (await repo.listRefunds(db, a.orderId)).find((r) => r.id === prep.refund.id)!;
    const order = (await db.query<CardOrderRow>('SELECT * FROM orders WHERE id = $1', [a.orderId])).rows[0]!;
    return { kind: 'refunded', refund, order };
  }

  /** Operator: holds a card order for `reason` (only before INVOICED). */
  async hold(orderId: string, reason: HoldReason): Promise<HoldOutcome> {
    return this.deps.db.transaction(async (tx) => {
      const o = await repo.lockOrder(tx, orderId);
      if (!o || !isCardFlow(o.flow)) return { kind: 'not_found' } as const;
      if (o.status !== 'CHECKOUT_VERIFIED' && o.status !== 'PAYMENT_CONFIRMED') return refused('card_order_not_refundable', `a ${o.status} order cannot be held`);
      const row = await patchOrder(tx, o.id, o.status, { held_reasons: JSON.stringify(withHold(o.held_reasons, reason)) });
      return { kind: 'ok', order: row! } as const;
    });
  }

  /** Operator: releases one hold reason; with none left, a succeeded payment is invoiced. */
  async release(orderId: string, reason: HoldReason): Promise<HoldOutcome> {
    const now = new Date(this.deps.clock.now());
    return this.deps.db.transaction(async (tx) => {
      const o = await repo.lockOrder(tx, orderId);
      if (!o || !isCardFlow(o.flow)) return { kind: 'not_found' } as const;
      if (!(o.held_reasons ?? []).includes(reason)) return refused('card_hold_not_found', `the order is not held for ${reason}`, 'reason');
      await patchOrder(tx, o.id, o.status, { held_reasons: JSON.stringify(withoutHold(o.held_reasons, reason)) });
      await settleOrder(tx, o.id, now, []);
      return { kind: 'ok', order: (await repo.lockOrder(tx, o.id))! } as const;
    });
  }

  /** Expires live card orders past their window whose payment is not under way. */
  async expireDue(limit = 200): Promise<number> {
    const { db, clock } = this.deps;
    const now = new Date(clock.now());
    let n = 0;
    for (const { id } of await repo.listExpirableCardOrders(db, now, limit)) {
      const moved = await db.transaction(async (tx) => {
        const cp = await repo.getCardPayment(tx, id);
        if (!cp || (cp.state !== 'pending' && cp.state !== 'declined')) return undefined;
        return transitionOrder(tx, { orderId: id, from: 'CHECKOUT_VERIFIED', trigger: 'expire', now });
      });
      if (moved) n++;
    }
    return n;
  }
}

export { opaqueAddress, toMinor } from './start.ts';

/**
 * Why a parsed event cannot be stored, or undefined: a U+0000 in any text (PostgreSQL text cannot
 * hold it: the insert would fail as a 500 the processor retries forever) or an id longer than any
 * processor's (bounded rows). A correctly signed event from a real processor never has either.
 */
function unstorable(ev: CardEvent): string | undefined {
  for (const [k, v] of Object.entries(ev)) {
    if (typeof v !== 'string') continue;
    if (v.includes('\u0000')) return `${k} contains U+0000`;
    if (v.length > 255) return `${k} is longer than 255 characters`;
  }
  return undefined;
}
