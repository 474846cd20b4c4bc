/**
 * The card-processor port: what Tollgate needs from a card processor, and nothing more. Each
 * processor is one folder next to this file (test/, stripe/) implementing {@link CardProcessor};
 * registry.ts picks the deployment's processor from configuration. The card service
 * (service.ts) never asks which processor it talks to: it starts payments and refunds through
 * this interface and applies the processor's notifications once they are normalized into
 * {@link CardEvent}s.
 *
 * Amounts cross the port in minor units (bigint): 9.50 EUR is 950n, 1500 JPY is 1500n.
 */

/** The processor's notification, normalized. `id` is the processor's event id (dedupe key). */
export interface CardEvent {
  id: string;
  type: CardEventType;
  /** Tollgate's order id, from the payment's metadata (or resolved by payment reference). */
  orderId?: string | undefined;
  /** The processor's payment reference (TEST `tpi_…`, Stripe PaymentIntent `pi_…`). */
  paymentReference: string;
  /** The charge behind a success: a second success with another charge is a duplicate payment. */
  chargeId?: string | undefined;
  /** payment.*: the amount charged; refund.*: the amount refunded; dispute.*: the amount disputed. */
  amountMinor?: bigint | undefined;
  currency?: string | undefined;
  refundId?: string | undefined;
  /** Tollgate's refund id (`rf_…`) when the processor echoes it back (refund metadata). */
  refundKey?: string | undefined;
  declineCode?: string | undefined;
  /** payment.succeeded: the card's brand (lower case: visa, mastercard, amex, …) when the processor reports it. */
  cardBrand?: string | undefined;
  /** payment.succeeded: the card's last four digits when the processor reports them (never more of the number). */
  cardLast4?: string | undefined;
  /** Unix seconds, the processor's event time (informational; ordering is by object state). */
  created: number;
}

type CardEventType = 'payment.processing' | 'payment.succeeded' | 'payment.failed' | 'refund.succeeded' | 'refund.failed' | 'dispute.opened' | 'dispute.won' | 'dispute.lost';

export interface StartPaymentInput {
  orderId: string;
  merchantId: string;
  checkoutId?: string | undefined;
  amountMinor: bigint;
  /** ISO 4217, upper case */
  currency: string;
  description: string;
  /**
   * Where the processor's hosted page returns the payer after paying (Tollgate's page, marked
   * `card_return=paid` so the page waits for the notification instead of sending the payer back).
   */
  returnUrl: string;
  /** Where it returns a payer who left without paying (marked `card_return=cancelled`). */
  cancelUrl: string;
  /**
   * The end of Tollgate's payment window. A processor with its own hosted page should close that
   * page near it (as far as the processor allows), so payers do not pay an order that expired.
   */
  expiresAt: Date;
  /**
   * When the order was created: a stable base for deadlines sent to the processor, so a retried
   * start (same idempotency key) sends the same request.
   */
  createdAt: Date;
  /** Same key for a retried start of the same order attempt: the processor returns the same payment. */
  idempotencyKey: string;
}

/** What the payer's page does next. */
export type NextAction =
  /** Tollgate's own card form (TEST processor): POST the card to Tollgate's test route. */
  | { type: 'card_form' }
  /** The processor's hosted payment page (Stripe Checkout). */
  | { type: 'redirect'; url: string };

/**
 * The next action of a started payment, from what was stored when it started (card_payments
 * `redirect_url`): every page that starts or resumes a card payment (hosted checkout, quick-pay)
 * reads it here, so a processor with its own hosted page is followed the same way everywhere.
 */
export function nextActionOf(stored: { redirect_url: string | null }): NextAction {
  return stored.redirect_url ? { type: 'redirect', url: stored.redirect_url } : { type: 'card_form' };
}

/** The query parameter a processor's page adds when it returns the payer (StartPaymentInput). */
const CARD_RETURN_PARAM = 'card_return';

/** `url` with `card_return=<outcome>` in its query (before any fragment). */
export function cardReturnUrl(url: string, outcome: 'paid' | 'cancelled'): string {
  const u = new URL(url);
  u.searchParams.set(CARD_RETURN_PARAM, outcome);
  return u.toString();
}

export interface StartedPayment {
  paymentReference: string;
  next: NextAction;
}

export interface RefundInput {
  paymentReference: string;
  orderId: string;
  /** Tollgate's refund id: sent to the processor (metadata) so its notification finds the record. */
  refundId: string;
  amountMinor: bigint;
  /** Tollgate's refund id: a retried call after a timeout creates no second refund. */
  idempotencyKey: string;
}

export interface RefundResult {
  refundId: string;
  status: 'pending' | 'succeeded' | 'failed';
}

/** Headers as node:http gives them. */
export type NotificationHeaders = Record<string, string | string[] | undefined>;

export interface CardProcessor {
  /** Upper-case name: the order flow is `FIAT_<name>`. */
  readonly name: string;
  /** Starts (or, with the same idempotency key, returns) the payment of a card order. */
  startPayment(input: StartPaymentInput): Promise<StartedPayment>;
  /** Refunds (part of) a succeeded payment. */
  refund(input: RefundInput): Promise<RefundResult>;
  /**
   * Verifies a notification from its exact raw bytes and headers and normalizes it. Events the
   * card rail does not act on normalize to an empty list (acknowledged, nothing applied).
   */
  parseNotification?(rawBody: string, headers: NotificationHeaders, nowMs: number): { ok: true; events: CardEvent[] } | { ok: false; reason: string };
  /**
   * Events after `cursor` (oldest first), for reconciliation after downtime; the returned cursor is
   * saved once they are applied.
   */
  listEventsSince?(cursor: string | undefined): Promise<{ events: CardEvent[]; cursor: string | undefined }>;
}

/** The order flow of a processor's orders. */
export function flowOf(processor: string): string {
  return `FIAT_${processor}`;
}

export function isCardFlow(flow: string): boolean {
  return flow.startsWith('FIAT_');
}

/**
 * The order service's cancel port (orders/ports.ts cancelRefusal, wired by main.ts): a card order
 * is ended by its processor's flow (expiry, refund), never by POST /api/v1/orders/{id}/cancel, in
 * any state.
 */
export function cardCancelRefusal(flow: string): { code: 'card_order_not_cancellable'; message: string } | undefined {
  return isCardFlow(flow) ? { code: 'card_order_not_cancellable', message: 'card orders cannot be cancelled through this endpoint' } : undefined;
}
