// The webhook event names, apart from the signing code in webhooks.ts: this module imports nothing
// (no node:crypto), so browser bundles such as the merchant portal take the list from here and
// cannot drift from what the server emits.

/** Every event name the service emits (docs/webhooks.md "Events"). */
export const WEBHOOK_EVENTS = [
  'order.payment_confirmed',
  'order.invoiced',
  'order.expired',
  'order.cancelled',
  'order.failed',
  'quickpay.checkout.completed',
  'fiat.payment.succeeded',
  // Attribution (docs/attribution.md): a payment recorded against an order without paying it.
  'order.late_payment',
  'order.underpaid',
  'order.duplicate_payment',
  // Card rail (docs/card-payments.md): refunds and disputes of card orders; never completion.
  'fiat.payment.refunded',
  'fiat.dispute.updated',
  // Refunds of every rail (docs/refunds.md): one event per succeeded refund.
  'order.refunded',
  // x402 facilitator (docs/machine-payments.md): a settlement to the merchant's wallet is final.
  'x402.settlement.confirmed',
  // Machine payments (docs/machine-payments.md): a challenge was paid (written with the payment).
  'mpp.payment.confirmed',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

/** @example isWebhookEvent('order.invoiced') // => true */
export function isWebhookEvent(s: unknown): s is WebhookEventName {
  return typeof s === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(s);
}
