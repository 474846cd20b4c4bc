// Webhook signatures (docs/webhooks.md).
//
// Every delivery carries two independent signatures over the same raw body:
// - `X-Webhook-Signature: sha256=<hex>`, the interface's own scheme: HMAC-SHA256 of the raw body,
//   keyed with the UTF-8 bytes of the whole endpoint secret string (prefix included).
// - The Standard Webhooks trio (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`)
//   so receivers get freshness and can use any Standard Webhooks library. That spec keys the HMAC
//   with the base64-decoded part of a `whsec_<base64>` secret.
// Endpoint secrets are therefore minted as `whsec_<base64 of 32 random bytes>` (generateWebhookSecret):
// one string the merchant stores, valid for both schemes.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { WebhookEventName } from './webhook-events.ts';

export { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEventName } from './webhook-events.ts';

export const HEADER_WEBHOOK_SIGNATURE = 'X-Webhook-Signature';
export const HEADER_WEBHOOK_EVENT = 'X-Webhook-Event';
export const HEADER_STANDARD_WEBHOOK_ID = 'webhook-id';
export const HEADER_STANDARD_WEBHOOK_TIMESTAMP = 'webhook-timestamp';
export const HEADER_STANDARD_WEBHOOK_SIGNATURE = 'webhook-signature';

/** Default freshness window of {@link verifyStandardWebhook}, the Standard Webhooks default. */
export const STANDARD_WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Body of every delivery. `id` (`evt_…`) is stable across retries of one event; `created_at` is set
 * per delivery attempt and is neither a payment time nor a deduplication key.
 */
export type WebhookEnvelope<P = Record<string, unknown>> = {
  id: string;
  event: WebhookEventName;
  payload: P;
  created_at: string;
};

/** Thrown for misuse that no header value could fix, such as passing a parsed body. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

const RAW_BODY_MISTAKE =
  'Webhook payload must be the raw request body (string or Buffer/Uint8Array) exactly as received. ' +
  'A parsed-and-re-serialized JSON object differs from the signed bytes (key order, spacing, number ' +
  'and unicode formatting), so its signature can never match. Capture the raw body before any JSON ' +
  'parsing: express.raw({ type: "application/json" }), fastify addContentTypeParser with ' +
  '{ parseAs: "buffer" } or the fastify-raw-body plugin, or `await request.text()` with fetch.';

function rawBodyBytes(rawBody: unknown): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new WebhookVerificationError(`${RAW_BODY_MISTAKE} Got ${rawBody === null ? 'null' : typeof rawBody}.`);
}

function secretList(secret: string | readonly string[]): string[] {
  const list = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [];
  // An empty secret is a configuration hole, never a key: HMAC under "" is forgeable by anyone.
  return list.filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/**
 * Mints an endpoint secret: `whsec_` + base64 of 32 random bytes (256 bits). Shown to the merchant
 * once; it keys both `X-Webhook-Signature` (as the whole UTF-8 string) and the Standard Webhooks
 * signature (as the 32 decoded bytes).
 *
 * @example generateWebhookSecret() // => 'whsec_q3Jb…=' (50 chars)
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * `X-Webhook-Signature` value for a raw body: `sha256=` + lowercase hex HMAC-SHA256, keyed with
 * the UTF-8 bytes of the whole secret string.
 *
 * @throws TypeError on an empty secret.
 * @example
 * signWebhookBody('whsec_…', '{"id":"evt_1","event":"order.invoiced",…}') // => 'sha256=5f1c…'
 */
export function signWebhookBody(secret: string, rawBody: string | Uint8Array): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('webhook: secret must be a non-empty string');
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBodyBytes(rawBody)).digest('hex')}`;
}

const SHA256_HEADER = /^sha256=([0-9a-f]{64})$/;

/**
 * Verifies `X-Webhook-Signature` over the raw body, in constant time, before any JSON parsing.
 * Pass several secrets during rotation; any one matching is enough. A malformed header (missing,
 * no `sha256=`, uppercase hex, wrong length) or no non-empty secret gives `false`.
 *
 * @throws WebhookVerificationError when `rawBody` is not a string or bytes (e.g. a parsed object).
 * @example
 * app.post('/hooks/tollgate', express.raw({ type: 'application/json' }), (req, res) => {
 *   const ok = verifyWebhookSignature({ secret: process.env.TOLLGATE_WEBHOOK_SECRET!, rawBody: req.body,
 *     header: req.get('X-Webhook-Signature') });
 *   if (!ok) return res.sendStatus(400);
 *   const envelope = JSON.parse(req.body.toString('utf8')); // dispatch on envelope.event
 * });
 */
export function verifyWebhookSignature(opts: { secret: string | string[]; rawBody: string | Uint8Array; header: string | undefined }): boolean {
  const body = rawBodyBytes(opts.rawBody);
  const m = typeof opts.header === 'string' ? SHA256_HEADER.exec(opts.header) : null;
  if (!m) return false;
  const given = Buffer.from(m[1]!, 'hex');
  let ok = false;
  // Every secret is tried (no early exit) so timing does not reveal which rotation slot matched.
  for (const secret of secretList(opts.secret)) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

const MAX_TIMESTAMP_SECONDS = 99_999_999_999;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The Standard Webhooks HMAC key of a secret: the base64 part of `whsec_<base64>` decoded (a secret
 * without the prefix is read as bare base64, as the reference libraries do). `undefined` when the
 * secret is not strict, padded, standard-alphabet base64 of at least one byte.
 *
 * @example standardWebhookKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')?.length // => 24
 */
export function standardWebhookKey(secret: string): Buffer | undefined {
  if (typeof secret !== 'string') return undefined;
  const b64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  // Buffer's base64 decoder skips invalid characters silently; a typo must not yield a weaker key.
  if (b64.length === 0 || !BASE64.test(b64)) return undefined;
  return Buffer.from(b64, 'base64');
}

function standardSignature(key: Buffer, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(body).digest();
}

/** The three Standard Webhooks headers of one delivery. */
export type StandardWebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * Signs a delivery the Standard Webhooks way: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`
 * keyed with {@link standardWebhookKey}. `id` is the event id (`evt_…`), the same on every retry, so
 * receivers can deduplicate; `timestamp` is the Unix second of this attempt.
 *
 * @throws TypeError when the secret is not `whsec_<base64>`, the id is not 1+ visible ASCII characters
 *   (it travels in a header), or the timestamp is not integer seconds (milliseconds are refused).
 * @example
 * standardWebhookHeaders({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
 *   timestamp: 1614265330, rawBody: '{"test": 2432232314}' })['webhook-signature']
 * // => 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 */
export function standardWebhookHeaders(opts: { secret: string; id: string; timestamp: number; rawBody: string | Uint8Array }): StandardWebhookHeaders {
  const key = standardWebhookKey(opts.secret);
  if (!key) throw new TypeError('webhook: Standard Webhooks secret must be whsec_<base64>');
  if (typeof opts.id !== 'string' || !/^[\x21-\x7e]+$/.test(opts.id)) throw new TypeError('webhook: id must be a non-empty token');
  // The upper bound (year 5138) catches the classic milliseconds-for-seconds slip at the sender.
  if (!Number.isInteger(opts.timestamp) || opts.timestamp < 0 || opts.timestamp > MAX_TIMESTAMP_SECONDS) {
    throw new TypeError(`webhook: timestamp must be integer Unix seconds, got ${opts.timestamp}`);
  }
  const timestamp = String(opts.timestamp);
  const sig = standardSignature(key, opts.id, timestamp, rawBodyBytes(opts.rawBody)).toString('base64');
  return {
    [HEADER_STANDARD_WEBHOOK_ID]: opts.id,
    [HEADER_STANDARD_WEBHOOK_TIMESTAMP]: timestamp,
    [HEADER_STANDARD_WEBHOOK_SIGNATURE]: `v1,${sig}`,
  };
}

/** Every header of one delivery (docs/webhooks.md): both signature schemes plus the event name. */
export type WebhookDeliveryHeaders = StandardWebhookHeaders & {
  'Content-Type': 'application/json';
  'X-Webhook-Signature': string;
  'X-Webhook-Event': WebhookEventName;
};

/**
 * All headers the dispatcher sends with one delivery attempt.
 *
 * @example
 * const rawBody = JSON.stringify(envelope);
 * const headers = webhookDeliveryHeaders({ secret, event: envelope.event, id: envelope.id,
 *   timestamp: Math.floor(Date.now() / 1000), rawBody });
 */
export function webhookDeliveryHeaders(opts: { secret: string; event: WebhookEventName; id: string; timestamp: number; rawBody: string | Uint8Array }): WebhookDeliveryHeaders {
  return {
    'Content-Type': 'application/json',
    [HEADER_WEBHOOK_SIGNATURE]: signWebhookBody(opts.secret, opts.rawBody),
    [HEADER_WEBHOOK_EVENT]: opts.event,
    ...standardWebhookHeaders(opts),
  };
}

/** Headers as node gives them (lowercase keys) or a fetch `Headers`. */
export type HeaderSource = Record<string, string | readonly string[] | undefined> | { get(name: string): string | null };

function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const rec = headers as Record<string, string | readonly string[] | undefined>;
  let v = rec[name];
  if (v === undefined) {
    const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
    v = key === undefined ? undefined : rec[key];
  }
  // A header sent twice is ambiguous; treat it as absent rather than guess which one was signed.
  return typeof v === 'string' ? v : undefined;
}

/** Why {@link verifyStandardWebhook} rejected a delivery. */
export type StandardWebhookFailure = 'headers_missing' | 'timestamp_invalid' | 'timestamp_too_old' | 'timestamp_too_new' | 'secret_invalid' | 'signature_mismatch';

export type StandardWebhookResult = { ok: true; id: string; timestamp: number } | { ok: false; reason: StandardWebhookFailure };

const V1_SIGNATURE = /^v1,([A-Za-z0-9+/]{43}=)$/;

/**
 * Verifies the Standard Webhooks headers of a delivery: freshness within ±`toleranceSeconds`
 * (default 300) and a `v1` signature from any of the given secrets (rotation). The signature
 * header may list several space-separated signatures; other versions (`v1a,…`) are ignored.
 * A rejection is a value naming the reason, so a receiver can log "too old" apart from "forged".
 *
 * @throws WebhookVerificationError when `rawBody` is not a string or bytes (e.g. a parsed object).
 * @example
 * const r = verifyStandardWebhook({ secret, headers: req.headers, rawBody: req.body });
 * if (!r.ok) return reply.code(400).send({ error: r.reason });
 */
export function verifyStandardWebhook(opts: {
  secret: string | string[];
  headers: HeaderSource;
  rawBody: string | Uint8Array;
  toleranceSeconds?: number;
  /** Milliseconds, like `Date.now` (the default). */
  now?: () => number;
}): StandardWebhookResult {
  const body = rawBodyBytes(opts.rawBody);
  const id = readHeader(opts.headers, HEADER_STANDARD_WEBHOOK_ID);
  const ts = readHeader(opts.headers, HEADER_STANDARD_WEBHOOK_TIMESTAMP);
  const sigHeader = readHeader(opts.headers, HEADER_STANDARD_WEBHOOK_SIGNATURE);
  if (!id || !ts || !sigHeader) return { ok: false, reason: 'headers_missing' };
  if (!/^[0-9]{1,15}$/.test(ts)) return { ok: false, reason: 'timestamp_invalid' };
  const timestamp = Number(ts);
  const nowSeconds = Math.floor((opts.now ?? Date.now)() / 1000);
  const tolerance = opts.toleranceSeconds ?? STANDARD_WEBHOOK_TOLERANCE_SECONDS;
  if (timestamp < nowSeconds - tolerance) return { ok: false, reason: 'timestamp_too_old' };
  if (timestamp > nowSeconds + tolerance) return { ok: false, reason: 'timestamp_too_new' };

  const keys = secretList(opts.secret)
    .map(standardWebhookKey)
    .filter((k): k is Buffer => k !== undefined);
  if (keys.length === 0) return { ok: false, reason: 'secret_invalid' };
  const given = sigHeader
    .split(' ')
    .map((part) => V1_SIGNATURE.exec(part)?.[1])
    .filter((s): s is string => s !== undefined)
    .map((s) => Buffer.from(s, 'base64'));
  let ok = false;
  for (const key of keys) {
    const expected = standardSignature(key, id, ts, body);
    for (const g of given) if (g.length === expected.length && timingSafeEqual(expected, g)) ok = true;
  }
  return ok ? { ok: true, id, timestamp } : { ok: false, reason: 'signature_mismatch' };
}
