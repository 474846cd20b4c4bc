import { signWebhookBody, standardWebhookHeaders, webhookDeliveryHeaders, type WebhookEventName } from '@tollgate/protocol';

/** An endpoint's signing secrets at one moment; `previous` only while its overlap window lasts. */
export interface SigningSecrets {
  current: string;
  previous?: string | undefined;
}

/**
 * The raw body of a delivery: the envelope `{ id, event, payload, created_at }` (docs/webhooks.md). The payload
 * is spliced in as the exact JSON text stored in the outbox (a `json` column), so a body costs one
 * string concatenation, not a parse and a re-serialization. The signature covers these bytes.
 *
 * @example envelopeBody('evt_1', 'order.invoiced', '{"order_id":"ord_1"}', new Date(0))
 * // => '{"id":"evt_1","event":"order.invoiced","payload":{"order_id":"ord_1"},"created_at":"1970-01-01T00:00:00.000Z"}'
 */
export function envelopeBody(id: string, event: WebhookEventName, payloadJson: string, createdAt: Date): string {
  return `{"id":${JSON.stringify(id)},"event":${JSON.stringify(event)},"payload":${payloadJson},"created_at":"${createdAt.toISOString()}"}`;
}

/**
 * Every header of one delivery attempt, both signature schemes.
 *
 * Rotation: while the previous secret is still valid, `X-Webhook-Signature` (one signature only,
 * by the interface) is computed with the PREVIOUS secret, the one receivers have deployed; the new
 * secret only takes over that header when the overlap ends. Receivers switch safely by verifying
 * against both secrets during the window (`verifyWebhookSignature({ secret: [next, prev] })`).
 * The Standard Webhooks header carries both: `v1,<new> v1,<old>`, as that spec prescribes.
 */
export function deliveryHeaders(opts: { secrets: SigningSecrets; event: WebhookEventName; eventId: string; timestampSeconds: number; rawBody: string }): Record<string, string> {
  const { secrets, event, eventId, timestampSeconds, rawBody } = opts;
  const base = webhookDeliveryHeaders({ secret: secrets.current, event, id: eventId, timestamp: timestampSeconds, rawBody });
  if (!secrets.previous) return base;
  const old = standardWebhookHeaders({ secret: secrets.previous, id: eventId, timestamp: timestampSeconds, rawBody });
  return {
    ...base,
    'X-Webhook-Signature': signWebhookBody(secrets.previous, rawBody),
    'webhook-signature': `${base['webhook-signature']} ${old['webhook-signature']}`,
  };
}
