// One HTTP exchange with Tollgate: serialize once, sign per attempt, time out, classify, retry.
//
// Retry policy (like stripe-node's RequestSender):
// - Only `safe` calls (reads) are retried: on network errors, attempt timeouts, 408, 429 and 5xx.
//   The delay is the server's `Retry-After` when it sent one (429/503), otherwise exponential
//   backoff with equal jitter: base·2^(n−1), capped, then a uniform draw in [d/2, d]. The jitter
//   spreads a fleet of merchant servers that all saw the same 503 instead of re-synchronizing them.
// - A `Retry-After` longer than 60 s is not slept through inside a library call: the error is
//   thrown with `retryAfterMs` so the caller can schedule the retry.
// - Unsafe calls (create, cancel, submit) get exactly one attempt. Their failures are sorted by
//   what the server may have done: a 4xx answer → TollgateApiError (not applied); a failure before
//   any byte could reach the server (refused, DNS, TLS) → TollgateNetworkError (not applied);
//   everything else → TollgateUnknownOutcomeError (maybe applied), including 5xx, since a 500/502/
//   504 can follow a committed transaction or come from a proxy that gave up waiting.
// Every attempt gets a fresh X-Timestamp and X-Nonce (a nonce may be consumed even by a failed
// attempt: docs/authentication.md). No idempotency key is sent: the merchant API takes none.
import { signedHeaders, type SignedHeaders } from './protocol.ts';
import { TollgateApiError, type TollgateError, TollgateNetworkError, TollgateResponseError, TollgateTimeoutError, TollgateUnknownOutcomeError, type UnknownOutcomeDetails } from './errors.ts';
import type { Checker } from './wire.ts';

export const SDK_VERSION = '0.1.0';
/** Longest `Retry-After` the SDK sleeps through on its own. */
const MAX_RETRY_AFTER_MS = 60_000;
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);
/**
 * Error codes of failures that happen before a request can reach the server: no connection was
 * ever established, or TLS refused it. Anything not listed (ECONNRESET, UND_ERR_SOCKET "other side
 * closed", EPIPE, unknown codes from a custom fetch) may have happened after the body was written.
 */
const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export interface TransportConfig {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
  maxAttempts: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  fetch: typeof fetch;
}

export interface CallSpec<T> {
  method: 'GET' | 'POST';
  /** Path below the base URL, ids already encoded. */
  path: string;
  /** The wire body (POST). Serialized once; that object is what gets signed. */
  body?: Record<string, unknown>;
  /** Query parameters (GET lists): sent in the URL and signed with the request (step 1). */
  query?: Record<string, string> | undefined;
  /** `merchant`: HMAC headers; `public`: none. */
  auth: 'merchant' | 'public';
  /** Whether the call may be repeated automatically (reads). */
  safe: boolean;
  /** The success status: 402 for createOrder, 200 otherwise. */
  expect: number;
  check: Checker<T>;
  /** Unsafe calls: identifiers for reconciliation. */
  reference?: Pick<UnknownOutcomeDetails, 'dappOrderId' | 'clientReferenceId' | 'orderId'>;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

type Attempt = { kind: 'response'; status: number; headers: Headers; text: string } | { kind: 'failed'; error: TollgateError; neverSent: boolean; aborted: boolean };

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^[0-9]{1,9}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Backoff before attempt `n + 1` (n ≥ 1): equal jitter over a capped exponential. */
export function backoffDelay(n: number, baseMs: number, maxMs: number, random = Math.random): number {
  const d = Math.min(maxMs, baseMs * 2 ** (n - 1));
  return Math.round(d / 2 + random() * (d / 2));
}

/**
 * The four authentication headers of one attempt: a new timestamp (seconds) and UUID nonce, and
 * the HMAC over `body`, the very object the attempt serializes. `clock` exists for the published
 * signing vectors; requests always use the defaults.
 *
 * @example signAttempt(apiKey, apiSecret, { dapp_order_id: 'A-1', chain_id: 2345 })['X-Sign'] // 64 hex chars
 */
export function signAttempt(apiKey: string, apiSecret: string, body: Record<string, unknown> | undefined, clock: { now?: () => number; nonce?: () => string; query?: Record<string, string> } = {}): SignedHeaders {
  return signedHeaders({ apiKey, apiSecret, ...(body ? { body } : {}), ...clock });
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function errorCode(err: unknown): string | undefined {
  for (let e = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The typed error of a non-success response: the envelope's fields, or `http_<status>` without one. */
function apiErrorFrom(status: number, headers: Headers, text: string): TollgateApiError {
  const body = parseBody(text);
  const env = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const hasEnvelope = typeof env.error === 'string' && typeof env.code === 'string';
  const snippet = typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : '';
  return new TollgateApiError(hasEnvelope ? (env.error as string) : `HTTP ${status}${snippet}`, {
    status,
    code: hasEnvelope ? (env.code as string) : `http_${status}`,
    param: typeof env.param === 'string' ? env.param : undefined,
    requestId: typeof env.request_id === 'string' ? env.request_id : (headers.get('x-request-id') ?? undefined),
    retryAfterMs: parseRetryAfter(headers.get('retry-after')),
    body,
  });
}

/** Sends merchant API requests. Holds the secret in a private field, out of logs and inspection. */
export class Transport {
  readonly #cfg: TransportConfig;

  constructor(cfg: TransportConfig) {
    this.#cfg = cfg;
  }

  /** Runs one logical call: one attempt for unsafe calls, up to `maxAttempts` for safe ones. */
  async call<T>(spec: CallSpec<T>): Promise<T> {
    spec.signal?.throwIfAborted(); // aborted before anything was sent: nothing to reconcile
    const raw = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const max = spec.safe ? Math.max(1, this.#cfg.maxAttempts) : 1;
    for (let n = 1; ; n++) {
      const at = await this.#attempt(spec, raw);
      if (!spec.safe) return this.#settleUnsafe(spec, raw!, at);

      if (at.kind === 'failed') {
        if (at.aborted) throw spec.signal!.reason;
        if (n >= max) throw at.error;
        await sleep(backoffDelay(n, this.#cfg.retryBaseDelayMs, this.#cfg.retryMaxDelayMs), spec.signal);
        continue;
      }
      if (at.status === spec.expect) return this.#read(spec, at);
      const err = apiErrorFrom(at.status, at.headers, at.text);
      const retryAfter = err.retryAfterMs;
      if (!RETRYABLE_STATUS.has(at.status) || n >= max || (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS)) throw err;
      await sleep(retryAfter ?? backoffDelay(n, this.#cfg.retryBaseDelayMs, this.#cfg.retryMaxDelayMs), spec.signal);
    }
  }

  #read<T>(spec: CallSpec<T>, at: Extract<Attempt, { kind: 'response' }>): T {
    const body = parseBody(at.text);
    const requestId = at.headers.get('x-request-id') ?? undefined;
    try {
      if (typeof body === 'string' || body === undefined) throw new TollgateResponseError('response body is not JSON', { body });
      return spec.check(body);
    } catch (err) {
      if (err instanceof TollgateResponseError) {
        throw new TollgateResponseError(`${spec.method} ${spec.path}: ${err.shortMessage}`, { status: at.status, requestId, body: err.body });
      }
      throw err;
    }
  }

  #settleUnsafe<T>(spec: CallSpec<T>, raw: string, at: Attempt): T {
    let cause: TollgateError;
    if (at.kind === 'failed') {
      if (at.neverSent) throw at.error;
      cause = at.error;
    } else if (at.status === spec.expect) {
      try {
        return this.#read(spec, at);
      } catch (err) {
        if (!(err instanceof TollgateResponseError)) throw err;
        cause = err;
      }
    } else {
      const apiError = apiErrorFrom(at.status, at.headers, at.text);
      if (at.status >= 400 && at.status < 500) throw apiError;
      cause = apiError;
    }
    const details: UnknownOutcomeDetails = {
      method: 'POST',
      path: spec.path,
      requestBody: spec.body!,
      rawRequestBody: raw,
      ...spec.reference,
    };
    const ref = spec.reference?.dappOrderId ?? spec.reference?.clientReferenceId ?? spec.reference?.orderId;
    throw new TollgateUnknownOutcomeError(`outcome of POST ${spec.path}${ref ? ` (${ref})` : ''} is unknown: ${cause.shortMessage}. It was not retried; reconcile before repeating it`, details, {
      status: cause.status,
      requestId: cause.requestId,
      body: cause.body,
      cause,
    });
  }

  async #attempt(spec: CallSpec<unknown>, raw: string | undefined): Promise<Attempt> {
    const cfg = this.#cfg;
    const timeoutMs = spec.timeoutMs ?? cfg.timeoutMs;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `tollgate-sdk-node/${SDK_VERSION}` };
    if (raw !== undefined) headers['content-type'] = 'application/json';
    // Fresh timestamp and nonce for this attempt; the signed object is the one `raw` came from.
    if (spec.auth === 'merchant') Object.assign(headers, signAttempt(cfg.apiKey, cfg.apiSecret, spec.body, spec.query ? { query: spec.query } : {}));

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, timeoutMs);
    const onAbort = () => controller.abort(spec.signal!.reason);
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });

    let phase: 'send' | 'read' = 'send';
    try {
      const search = spec.query && Object.keys(spec.query).length ? `?${new URLSearchParams(spec.query).toString()}` : '';
      const res = await cfg.fetch(cfg.baseUrl + spec.path + search, {
        method: spec.method,
        headers,
        ...(raw !== undefined ? { body: raw } : {}),
        signal: controller.signal,
        // A followed redirect would resend the same nonce (a replay) and the body to another host.
        redirect: 'manual',
      });
      phase = 'read';
      const text = await res.text();
      return { kind: 'response', status: res.status, headers: res.headers, text };
    } catch (err) {
      const where = `${spec.method} ${spec.path}`;
      if (timedOut) {
        return { kind: 'failed', neverSent: false, aborted: false, error: new TollgateTimeoutError(`${where}: no response within ${timeoutMs} ms`, { timeoutMs, cause: err }) };
      }
      if (spec.signal?.aborted) {
        const error = new TollgateNetworkError(`${where}: aborted by the caller`, { cause: spec.signal.reason });
        return { kind: 'failed', neverSent: false, aborted: true, error };
      }
      const code = errorCode(err);
      const neverSent = phase === 'send' && code !== undefined && NEVER_SENT_CODES.has(code);
      const detail = code ?? (err instanceof Error ? err.message : String(err));
      return { kind: 'failed', neverSent, aborted: false, error: new TollgateNetworkError(`${where}: network error (${detail})`, { cause: err }) };
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    }
  }
}
