// Webhook verification for receivers (docs/webhooks.md).
//
// Order of checks, each before any JSON parsing: the raw body is bytes (a parsed object is a bug
// and throws with an explanation), `X-Webhook-Signature` verifies in constant time against any of
// the configured secrets (rotation), and, unless disabled, the Standard Webhooks headers verify
// too with a freshness window, so a captured delivery cannot be replayed days later. Only then is
// the body parsed. A forged or stale delivery is an expected failure: a value, not an exception.
import { TollgateWebhookError } from './errors.ts';
import { HEADER_WEBHOOK_SIGNATURE, verifyStandardWebhook, verifyWebhookSignature, WebhookVerificationError, type HeaderSource } from './protocol.ts';
import type { WebhookEvent } from './webhook-events.ts';

export type { HeaderSource };

/** Why a delivery was rejected. */
export type WebhookRejection = 'secret_invalid' | 'signature_missing' | 'signature_mismatch' | 'freshness_headers_missing' | 'timestamp_invalid' | 'timestamp_too_old' | 'timestamp_too_new' | 'payload_invalid';

export type WebhookVerification = { ok: true; event: WebhookEvent } | { ok: false; reason: WebhookRejection };

export interface VerifyWebhookOptions {
  /** The endpoint's webhook secret (`whsec_…`), not the API secret. Several during rotation. */
  secret: string | readonly string[];
  /** The request body exactly as received: a string or bytes, never a parsed object. */
  rawBody: string | Uint8Array;
  /** Request headers: Node's `req.headers`, a fetch `Headers`, or a plain record. */
  headers: HeaderSource;
  /**
   * Freshness window of the signed `webhook-timestamp`, in seconds. Default 300. `null` disables
   * the check (and no longer requires the `webhook-*` headers); freshness is the receiver's
   * choice (docs/webhooks.md).
   */
  toleranceSeconds?: number | null | undefined;
  /** Clock in ms, like `Date.now` (the default). */
  now?: (() => number) | undefined;
}

function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const rec = headers as Record<string, string | readonly string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key === undefined ? undefined : rec[key];
  return typeof v === 'string' ? v : undefined; // a repeated header is ambiguous: treated as absent
}

function parseEnvelope(rawBody: string | Uint8Array): WebhookEvent | undefined {
  try {
    const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const e = v as Record<string, unknown>;
    const payloadOk = typeof e.payload === 'object' && e.payload !== null && !Array.isArray(e.payload);
    return typeof e.event === 'string' && typeof e.id === 'string' && payloadOk ? (v as WebhookEvent) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies a webhook delivery against its raw body and returns the parsed event, or the reason it
 * was rejected. Dispatch on the returned `event.event`, not on the `X-Webhook-Event` header.
 *
 * @throws TollgateWebhookError when `rawBody` is not a string or bytes (e.g. `req.body` after a
 *   JSON body parser): re-serialized JSON never matches the signed bytes.
 * @example
 * app.post('/webhooks/tollgate', express.raw({ type: 'application/json' }), async (req, res) => {
 *   const v = verifyWebhook({ secret: process.env.TOLLGATE_WEBHOOK_SECRET!, rawBody: req.body, headers: req.headers });
 *   if (!v.ok) return res.status(400).send(v.reason);
 *   if (v.event.event === 'order.invoiced') await fulfilOnce(v.event.payload.order_id);
 *   res.sendStatus(204);
 * });
 */
export function verifyWebhook(opts: VerifyWebhookOptions): WebhookVerification {
  const { rawBody } = opts;
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    try {
      verifyWebhookSignature({ secret: 'x', rawBody, header: undefined }); // throws the explanatory error
    } catch (err) {
      if (err instanceof WebhookVerificationError) throw new TollgateWebhookError(err.message, { cause: err });
      throw err;
    }
    throw new TollgateWebhookError('webhook rawBody must be a string or bytes');
  }
  const secrets = (typeof opts.secret === 'string' ? [opts.secret] : Array.isArray(opts.secret) ? opts.secret : []).filter((s): s is string => typeof s === 'string' && s.length > 0);
  if (secrets.length === 0) return { ok: false, reason: 'secret_invalid' };

  const header = readHeader(opts.headers, HEADER_WEBHOOK_SIGNATURE);
  if (header === undefined) return { ok: false, reason: 'signature_missing' };
  if (!verifyWebhookSignature({ secret: secrets, rawBody, header })) return { ok: false, reason: 'signature_mismatch' };

  if (opts.toleranceSeconds !== null) {
    const r = verifyStandardWebhook({
      secret: secrets,
      headers: opts.headers,
      rawBody,
      toleranceSeconds: opts.toleranceSeconds ?? 300,
      ...(opts.now ? { now: opts.now } : {}),
    });
    if (!r.ok) {
      const reason = r.reason === 'headers_missing' ? 'freshness_headers_missing' : r.reason === 'signature_mismatch' ? 'signature_mismatch' : r.reason;
      return { ok: false, reason };
    }
  }
  const event = parseEnvelope(rawBody);
  return event ? { ok: true, event } : { ok: false, reason: 'payload_invalid' };
}
