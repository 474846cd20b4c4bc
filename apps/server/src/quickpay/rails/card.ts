import type { QuickPayContext } from './port.ts';
import { cardsOf } from '../../rails/card/index.ts';
import { nextActionOf } from '../../rails/card/port.ts';
import { getProduct, type SessionWithOrder } from '../repo.ts';
import type { QuickPayRail, QuickPayStatus } from './port.ts';
import { quickpayOrderRef, refused, sessionStatusFromOrder } from './session-order.ts';

/**
 * The card rail of quick-pay: a session sells the link's product at its fiat price (any-amount
 * links take no card, see validate.ts). Its FIAT_<PROCESSOR> order is created when the session is,
 * through the card rail's reusable start (rails/card/start.ts), with the crypto rail's
 * `quickpay:{session_id}` reference — so the order → quick-pay hook (sync.ts) completes it on
 * INVOICED exactly as it does a crypto session, and a held card payment (PAYMENT_CONFIRMED with
 * held_reasons) sends no `quickpay.checkout.completed` until the hold is released and the order
 * invoiced. The session's `checkout_id` (docs/quickpay.md) is its own `qps_` id.
 */
export const cardRail: QuickPayRail = {
  name: 'card',

  sessionAmount(_link, product) {
    if (!product?.fiat_amount || !product.fiat_currency) return refused('rail_not_enabled', 'this link has no card price', 'rail');
    return product.fiat_amount;
  },

  async choose(deps, { link, product }) {
    const m = await deps.merchants.getMerchant(link.merchant_id);
    if (!m?.card_enabled) return refused('rail_not_enabled', 'the card rail is not enabled for this merchant', 'rail');
    if (!product?.fiat_amount || !product.fiat_currency) return refused('rail_not_enabled', 'this link has no card price', 'rail');
    if (!cardsOf(deps).processor) return refused('card_processor_unavailable', 'no card processor is configured in this deployment');
    return { chainId: null, tokenSymbol: null, fromAddress: null };
  },

  async open(deps: QuickPayContext, s) {
    const product = s.product_id ? await getProduct(deps.db, s.product_id) : undefined;
    if (!product?.fiat_currency) return refused('rail_not_enabled', 'this link has no card price', 'rail');
    const out = await cardsOf(deps).startCardPayment({
      merchantId: s.merchant_id,
      dappOrderId: quickpayOrderRef(s.id),
      currency: product.fiat_currency,
      amount: s.amount,
      expiresAt: s.expires_at,
      // The processor's page (Stripe) returns the payer to the link's page, resuming this session
      // (service.ts linkUrl; not imported, the service imports the rails).
      returnUrl: `${deps.config.publicBaseUrl.replace(/\/+$/, '')}/quickpay/pay/${s.link_id}#${s.id}`,
    });
    if (out.kind === 'retry') return refused('idempotency_key_conflict', 'the session changed concurrently; read it again', 'idempotency_key');
    if (out.kind === 'refused') return refused(out.code, out.message, out.param);
    return { kind: 'opened', orderId: out.start.order_id, checkoutId: s.id, expiresAt: new Date(out.start.expires_at * 1000) };
  },

  status(v: SessionWithOrder, nowMs: number): QuickPayStatus {
    // Paid but held (PAYMENT_CONFIRMED: duplicate charge, dispute, …) is not complete until the
    // hold is released and the order invoiced. A payment the processor is still processing keeps
    // the session OPEN past its window (docs/card-payments.md: a card session keeps OPEN while its
    // payment is processing) until it answers: COMPLETED, or FAILED on a decline (rails/card/apply.ts).
    return sessionStatusFromOrder(v, nowMs, { PAYMENT_CONFIRMED: 'OPEN', INVOICED: 'COMPLETED' });
  },

  terms(v) {
    const o = v.order;
    if (!o) return undefined;
    // token_symbol is the currency and amount_wei the minor units on a card order (card-payments.md).
    // next_action is the processor's (rails/card/port.ts): Tollgate's card form (TEST) or a
    // redirect to the processor's own page (Stripe Checkout); the page follows it as the checkout
    // page does, and payment_state says whether a payment is already under way.
    return {
      order_id: o.id,
      checkout_id: v.session.id,
      processor: o.flow.replace(/^FIAT_/, ''),
      currency: o.token_symbol,
      amount: v.session.amount,
      amount_minor: o.amount_wei,
      expires_at: Math.floor(o.expires_at.getTime() / 1000),
      payment_state: o.card?.state ?? 'pending',
      next_action: nextActionOf({ redirect_url: o.card?.redirect_url ?? null }),
    };
  },
};
