// The typed webhook events: one envelope per event name of @tollgate/protocol's WEBHOOK_EVENTS,
// with the payload that event carries (docs/webhooks.md §Events).
//
// Why a map keyed by the protocol's names: `WebhookEvent` is derived from WEBHOOK_EVENTS rather
// than listed again, so an event added to the protocol without a payload here fails to compile
// (`WebhookPayloads[E]` does not exist), and a name here the protocol does not know fails the
// `NoExtraEvents` check below. The SDK's copy of the list cannot go stale again.
import type { WebhookEventName } from './protocol.ts';
import type { MppReceiptClaims } from './receipts.ts';
import type { OrderStatusRecord, RecordedPaymentPayload, Refund } from './types.ts';

interface Envelope<E extends string, P> {
  /** `evt_…`, stable across retries of one event. Fulfil on your business key regardless. */
  id: string;
  event: E;
  payload: P;
  /** Set per delivery attempt: neither a payment time nor a deduplication key. */
  created_at: string;
}

/** The fields every card-rail event payload starts with (docs/card-payments.md). */
export interface CardEventPayload {
  order_id: string;
  checkout_id?: string;
  processor: string;
  payment_reference: string;
  currency: string;
  /** Decimal string in `currency` (never a float). */
  amount: string;
}

/** An x402 settlement to one of the merchant's wallets: an item of `GET /api/v1/x402/settlements`. */
export interface X402Settlement {
  settlement_id: string;
  /** CAIP-2, `eip155:<chain_id>`. */
  network: string;
  chain_id: number;
  token_contract: string;
  /** null when the token is no longer configured on the gateway. */
  token_symbol: string | null;
  payer: string;
  pay_to: string;
  amount_wei: string;
  tx_hash: string;
  status: 'pending' | 'confirmed' | 'failed';
  block_number: number | null;
  created_at: string;
}

/**
 * A paid machine payment: an item of `GET /api/v1/mpp/payments`. The claims are the signed
 * receipt's, spread beside it; check `receipt` with verifyMppReceipt when the claims matter.
 */
export type MppPayment = { status: 'paid'; receipt: string } & MppReceiptClaims & { paid_at: string };

type OrderEventName = 'order.payment_confirmed' | 'order.invoiced' | 'order.expired' | 'order.cancelled' | 'order.failed';
type RecordedPaymentEventName = 'order.late_payment' | 'order.underpaid' | 'order.duplicate_payment';

/** The payload of each event, by name: exactly the names of WEBHOOK_EVENTS. */
export interface WebhookPayloads extends Record<OrderEventName, OrderStatusRecord>, Record<RecordedPaymentEventName, RecordedPaymentPayload> {
  'quickpay.checkout.completed': {
    checkout_id: string;
    order_id: string;
    order_status: string;
    tx_hash?: string;
    client_reference_id?: string;
    line_items: unknown[];
    public_metadata: Record<string, unknown>;
  };
  /** A card payment notification: record and reconcile, never ship because of it. */
  'fiat.payment.succeeded': CardEventPayload & { held: boolean; duplicate?: true };
  'fiat.payment.refunded': CardEventPayload & { refund_id?: string; refunded_total: string; order_status: string };
  'fiat.dispute.updated': CardEventPayload & { dispute_status: 'opened' | 'won' | 'lost'; order_status: string };
  /** A refund of any rail succeeded (docs/refunds.md). */
  'order.refunded': Refund;
  'x402.settlement.confirmed': X402Settlement & { status: 'confirmed' };
  'mpp.payment.confirmed': MppPayment;
}

// Compile-time guard, the other direction: no payload for a name the protocol does not emit.
type NoExtraEvents<K extends WebhookEventName> = K;
type _PayloadsMatchProtocol = NoExtraEvents<keyof WebhookPayloads & string>;

/** The envelope of event `E`. */
export type WebhookEventOf<E extends WebhookEventName> = Envelope<E, WebhookPayloads[E]>;

/**
 * A verified delivery, narrowed by `event`. A newer server may send event names this version does
 * not list: acknowledge them (2xx) in a `default:` branch rather than failing the delivery.
 */
export type WebhookEvent = { [E in WebhookEventName]: WebhookEventOf<E> }[WebhookEventName];

/** `order.*` events carry the order status record. */
export type OrderWebhookEvent = WebhookEventOf<OrderEventName>;
/** A payment recorded against an order without paying it (late, short, or a second payment): reconcile. */
export type RecordedPaymentEvent = WebhookEventOf<RecordedPaymentEventName>;
export type QuickpayCheckoutCompletedEvent = WebhookEventOf<'quickpay.checkout.completed'>;
/** A card payment notification: record and reconcile, never ship because of it. */
export type FiatPaymentSucceededEvent = WebhookEventOf<'fiat.payment.succeeded'>;
/** A card refund succeeded; an INVOICED order stays INVOICED. */
export type FiatPaymentRefundedEvent = WebhookEventOf<'fiat.payment.refunded'>;
/** A card dispute opened, was won or lost; after INVOICED the order never changes. */
export type FiatDisputeUpdatedEvent = WebhookEventOf<'fiat.dispute.updated'>;
/** A refund of any rail succeeded; once per refund. */
export type OrderRefundedEvent = WebhookEventOf<'order.refunded'>;
/** An x402 settlement to the merchant's wallet has its confirmations; once per settlement. */
export type X402SettlementConfirmedEvent = WebhookEventOf<'x402.settlement.confirmed'>;
/** A machine-payment challenge of the merchant was paid; the receipt at request time stays the signal to serve. */
export type MppPaymentConfirmedEvent = WebhookEventOf<'mpp.payment.confirmed'>;
