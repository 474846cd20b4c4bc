import type Stripe from 'stripe';
import type { CardEvent } from '../port.ts';

/**
 * Stripe event types the card rail acts on, and their normalization into CardEvents. Anything
 * else normalizes to [] (acknowledged, nothing applied). The order is found through the metadata
 * Tollgate put on the Checkout Session and its PaymentIntent (`tollgate_order_id`), or through
 * the PaymentIntent id recorded as the order's payment reference.
 */
export const STRIPE_EVENT_TYPES = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'payment_intent.processing',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'charge.dispute.created',
  'charge.dispute.closed',
] as const;

const idOf = (v: string | { id: string } | null | undefined): string | undefined => (typeof v === 'string' ? v : v?.id);
const orderOf = (md: Stripe.Metadata | null | undefined): string | undefined => md?.tollgate_order_id || undefined;

/**
 * Brand and last four of the charge's card, when the event carries the charge expanded (an object,
 * not its id); otherwise nothing and the portal says the processor did not report them.
 */
function cardOf(charge: string | Stripe.Charge | null | undefined): { cardBrand?: string; cardLast4?: string } {
  const card = typeof charge === 'object' && charge ? charge.payment_method_details?.card : undefined;
  return card ? { ...(card.brand ? { cardBrand: card.brand } : {}), ...(card.last4 ? { cardLast4: card.last4 } : {}) } : {};
}

export function normalizeStripeEvent(e: Stripe.Event): CardEvent[] {
  const base = { id: e.id, created: e.created };
  switch (e.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.async_payment_failed': {
      const s = e.data.object;
      const pi = idOf(s.payment_intent);
      if (!pi) return [];
      const common = { ...base, orderId: orderOf(s.metadata) ?? s.client_reference_id ?? undefined, paymentReference: pi, amountMinor: s.amount_total !== null ? BigInt(s.amount_total) : undefined, currency: s.currency ?? undefined };
      if (e.type === 'checkout.session.async_payment_failed') return [{ ...common, type: 'payment.failed', declineCode: 'async_payment_failed' }];
      // A completed session with an unpaid status is a delayed method still processing.
      if (s.payment_status !== 'paid') return [{ ...common, type: 'payment.processing' }];
      return [{ ...common, type: 'payment.succeeded' }];
    }
    case 'payment_intent.processing':
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed': {
      const pi = e.data.object;
      const common = { ...base, orderId: orderOf(pi.metadata), paymentReference: pi.id, amountMinor: BigInt(e.type === 'payment_intent.succeeded' ? pi.amount_received || pi.amount : pi.amount), currency: pi.currency };
      if (e.type === 'payment_intent.processing') return [{ ...common, type: 'payment.processing' }];
      if (e.type === 'payment_intent.succeeded') return [{ ...common, type: 'payment.succeeded', ...cardOf(pi.latest_charge) }];
      const err = pi.last_payment_error;
      return [{ ...common, type: 'payment.failed', declineCode: err?.decline_code ?? err?.code ?? 'card_declined' }];
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed': {
      const r = e.data.object;
      const pi = idOf(r.payment_intent);
      if (!pi) return [];
      const status = e.type === 'refund.failed' ? 'failed' : r.status;
      if (status !== 'succeeded' && status !== 'failed' && status !== 'canceled') return []; // pending: wait for the update
      return [
        {
          ...base,
          type: status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
          orderId: orderOf(r.metadata),
          paymentReference: pi,
          refundId: r.id,
          refundKey: r.metadata?.tollgate_refund_id || undefined,
          amountMinor: BigInt(r.amount),
          currency: r.currency,
        },
      ];
    }
    case 'charge.dispute.created':
    case 'charge.dispute.closed': {
      const d = e.data.object;
      const pi = idOf(d.payment_intent);
      if (!pi) return [];
      const type = e.type === 'charge.dispute.created' ? 'dispute.opened' : d.status === 'won' ? 'dispute.won' : d.status === 'lost' ? 'dispute.lost' : undefined;
      if (!type) return [];
      return [{ ...base, type, paymentReference: pi, amountMinor: BigInt(d.amount), currency: d.currency }];
    }
    default:
      return [];
  }
}
