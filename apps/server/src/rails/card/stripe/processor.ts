import Stripe from 'stripe';
import type { StripeSettings } from '../../../config/secrets.ts';
import type { CardEvent, CardProcessor, NotificationHeaders, RefundInput, RefundResult, StartedPayment, StartPaymentInput } from '../port.ts';
import { normalizeStripeEvent, STRIPE_EVENT_TYPES } from './events.ts';

/**
 * The Stripe adapter (flow FIAT_STRIPE), on the official `stripe` package, unmodified.
 *
 * - Payments: Stripe Checkout Sessions (mode `payment`). The payer is redirected to Stripe's own
 *   page, so Tollgate's hosted page loads nothing from Stripe and keeps its strict CSP; the card
 *   never touches Tollgate. The order id travels in `client_reference_id` and in the metadata of
 *   both the session and its PaymentIntent, which is how notifications find the order.
 * - Every call carries an idempotency key derived from Tollgate's own ids (the order for a start,
 *   the `rf_…` refund id for a refund): the client's automatic retries (maxNetworkRetries) and a
 *   retry of ours after a timeout reach the same Stripe object.
 * - Notifications: verified with `stripe.webhooks.constructEvent` over the raw body, with the
 *   configured tolerance (default 300 s), then normalized (events.ts). Deduplication by event id
 *   and ordering by object state happen in the card service, for every processor alike.
 * - Reconciliation: `listEventsSince` walks `GET /v1/events` forward from the saved cursor, so
 *   notifications lost while Tollgate was down are applied on restart.
 *
 * `settings.api` points the client at another host/port/protocol (a local stand-in in tests); in
 * production it is absent and the client talks to api.stripe.com over https.
 */
export class StripeCardProcessor implements CardProcessor {
  readonly name = 'STRIPE';
  private readonly stripe: Stripe;
  private readonly settings: StripeSettings;

  constructor(settings: StripeSettings) {
    this.settings = settings;
    this.stripe = new Stripe(settings.secretKey(), {
      maxNetworkRetries: 2,
      timeout: 10_000,
      telemetry: false,
      ...(settings.api ? { host: settings.api.host, port: settings.api.port, protocol: settings.api.protocol } : {}),
    });
  }

  async startPayment(input: StartPaymentInput): Promise<StartedPayment> {
    const metadata = { tollgate_order_id: input.orderId, ...(input.checkoutId ? { tollgate_checkout_id: input.checkoutId } : {}) };
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: 'payment',
        client_reference_id: input.orderId,
        line_items: [{ quantity: 1, price_data: { currency: input.currency.toLowerCase(), unit_amount: Number(input.amountMinor), product_data: { name: input.description } } }],
        success_url: input.returnUrl,
        cancel_url: input.cancelUrl,
        expires_at: stripeExpiry(input.expiresAt, input.createdAt),
        metadata,
        payment_intent_data: { metadata },
      },
      { idempotencyKey: input.idempotencyKey },
    );
    if (!session.url) throw new Error('Stripe returned a Checkout Session without a url');
    return { paymentReference: session.id, next: { type: 'redirect', url: session.url } };
  }

  async refund(input: RefundInput): Promise<RefundResult> {
    if (!input.paymentReference.startsWith('pi_')) throw new Error('only a succeeded PaymentIntent can be refunded');
    const r = await this.stripe.refunds.create(
      {
        payment_intent: input.paymentReference,
        amount: Number(input.amountMinor),
        metadata: { tollgate_order_id: input.orderId, tollgate_refund_id: input.refundId },
      },
      { idempotencyKey: input.idempotencyKey },
    );
    return { refundId: r.id, status: r.status === 'succeeded' ? 'succeeded' : r.status === 'failed' || r.status === 'canceled' ? 'failed' : 'pending' };
  }

  parseNotification(rawBody: string, headers: NotificationHeaders, nowMs: number): { ok: true; events: CardEvent[] } | { ok: false; reason: string } {
    const sig = headers['stripe-signature'];
    if (typeof sig !== 'string' || sig.length === 0) return { ok: false, reason: 'missing Stripe-Signature header' };
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, sig, this.settings.webhookSecret(), this.settings.webhookToleranceSeconds, undefined, nowMs);
    } catch (err) {
      // The library's message names the cause (no signature matched, timestamp outside the
      // tolerance zone); it never contains the secret or the body.
      return { ok: false, reason: (err as Error).message.split('\n')[0]!.slice(0, 200) };
    }
    return { ok: true, events: normalizeStripeEvent(event) };
  }

  async listEventsSince(cursor: string | undefined): Promise<{ events: CardEvent[]; cursor: string | undefined }> {
    const raw: Stripe.Event[] = [];
    if (cursor) {
      // ending_before pages toward newer events; each page is newest-first.
      let before = cursor;
      for (let page = 0; page < 50; page++) {
        const res = await this.stripe.events.list({ limit: 100, ending_before: before, types: [...STRIPE_EVENT_TYPES] });
        if (res.data.length === 0) break;
        raw.push(...res.data);
        before = res.data[0]!.id;
        if (!res.has_more) break;
      }
    } else {
      // First run: the last three days (Stripe keeps 30), newest-first pages.
      const since = Math.floor(Date.now() / 1000) - 3 * 86_400;
      let after: string | undefined;
      for (let page = 0; page < 50; page++) {
        const res = await this.stripe.events.list({ limit: 100, created: { gte: since }, types: [...STRIPE_EVENT_TYPES], ...(after ? { starting_after: after } : {}) });
        raw.push(...res.data);
        if (!res.has_more || res.data.length === 0) break;
        after = res.data[res.data.length - 1]!.id;
      }
    }
    raw.sort((a, b) => a.created - b.created);
    const newest = raw.length ? raw.reduce((a, b) => (b.created >= a.created ? b : a)).id : cursor;
    return { events: raw.flatMap(normalizeStripeEvent), cursor: newest };
  }
}

/**
 * The Checkout Session's `expires_at`: Tollgate's payment window, within what Stripe accepts (30
 * minutes to 24 hours after the request). Without it Stripe keeps its page open for 24 hours and
 * payers could pay an order that expired long ago; with a window shorter than 30 minutes the page
 * still outlives it by the difference, and a payment made then is reported `held` (paid after the
 * order closed: refund it).
 *
 * Computed from the order's creation time, not the clock, so a retried start (same idempotency key)
 * sends the same request: Stripe refuses a key reused with other parameters. The 35-minute floor
 * leaves five minutes for such a retry; the 23-hour ceiling an hour of clock skew.
 */
export function stripeExpiry(windowEnd: Date, orderCreatedAt: Date): number {
  const base = Math.floor(orderCreatedAt.getTime() / 1000);
  return Math.min(Math.max(Math.floor(windowEnd.getTime() / 1000), base + 35 * 60), base + 23 * 3600);
}
