// Typed errors of the SDK, in the manner of viem's BaseError: one base class that carries the
// facts a caller branches on (status, code, request id, response body, cause), subclasses for the
// kinds of failure, `instanceof` across all of them, and `walk()` over the cause chain.
//
// The split that matters for money is between "provably not applied" and "maybe applied":
// - TollgateApiError with a 4xx status: the server answered and refused; nothing happened.
// - TollgateNetworkError: no HTTP exchange took place (connection refused, DNS, TLS); nothing
//   reached the server.
// - TollgateUnknownOutcomeError: a create/cancel/submit may or may not have been applied (timeout,
//   reset after sending, 5xx, unreadable success). It is deliberately NOT a subclass of
//   TollgateNetworkError: code written as `if (err instanceof TollgateNetworkError) retry()` must
//   never re-create an order whose first attempt may already exist.
import type { ErrorCode } from './protocol.ts';

/** Codes the SDK itself assigns (no server response carried one). */
export type SdkErrorCode = 'network_error' | 'timeout' | 'unknown_outcome' | 'invalid_response' | 'webhook_raw_body_required';

/**
 * A server catalog code ({@link ErrorCode}), an SDK code ({@link SdkErrorCode}), `http_<status>`
 * for an error response without the envelope (a proxy page), or a code a newer server introduced.
 */
export type TollgateErrorCode = ErrorCode | SdkErrorCode | (string & {});

export interface TollgateErrorOptions {
  status?: number | undefined;
  code: TollgateErrorCode;
  requestId?: string | undefined;
  body?: unknown;
  cause?: unknown;
}

/**
 * Base class of every error the SDK throws on purpose.
 *
 * @example
 * try { await client.getOrderStatus(orderId); }
 * catch (err) {
 *   if (err instanceof TollgateError) console.error(err.code, err.status, err.requestId);
 *   throw err;
 * }
 */
export class TollgateError extends Error {
  override name = 'TollgateError';
  /** HTTP status of the response, when there was one. */
  readonly status: number | undefined;
  readonly code: TollgateErrorCode;
  /** `request_id` of the error envelope (or the `x-request-id` header): quote it to the operator. */
  readonly requestId: string | undefined;
  /** Parsed response body (the raw text when it was not JSON); undefined without a response. */
  readonly body: unknown;
  /** The message without the status/code/request-id suffix (the server's `error` text). */
  readonly shortMessage: string;

  constructor(shortMessage: string, opts: TollgateErrorOptions) {
    const facts = [opts.status !== undefined ? `HTTP ${opts.status}` : undefined, opts.code, opts.requestId && `request ${opts.requestId}`].filter(Boolean).join(', ');
    super(`${shortMessage} (${facts})`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.shortMessage = shortMessage;
    this.status = opts.status;
    this.code = opts.code;
    this.requestId = opts.requestId;
    this.body = opts.body;
  }

  /**
   * Follows `cause` from this error; returns the first error `predicate` accepts (or, without a
   * predicate, the innermost cause).
   *
   * @example err.walk((e) => e instanceof TollgateTimeoutError) // the timeout behind an unknown outcome
   */
  walk(predicate?: (err: unknown) => boolean): unknown {
    let current: unknown = this;
    for (let depth = 0; depth < 16; depth++) {
      if (predicate?.(current)) return current;
      const next = (current as { cause?: unknown } | null)?.cause;
      if (next === undefined || next === null) return predicate ? undefined : current;
      current = next;
    }
    return predicate ? undefined : current;
  }
}

/**
 * The server answered with an error status (the envelope `{ error, code, param?, request_id }`, docs/errors.md).
 * A 4xx means the request was not applied.
 *
 * @example
 * try { await client.createOrder(params); }
 * catch (err) {
 *   if (err instanceof TollgateApiError && err.code === 'order_already_exists') return reconcile(params.dappOrderId);
 *   throw err;
 * }
 */
export class TollgateApiError extends TollgateError {
  override name = 'TollgateApiError';
  declare readonly status: number;
  /** The request field at fault (`param` of the envelope), when the server named one. */
  readonly param: string | undefined;
  /** The `Retry-After` delay in milliseconds (429, 503), when the server sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(shortMessage: string, opts: TollgateErrorOptions & { status: number; param?: string | undefined; retryAfterMs?: number | undefined }) {
    super(shortMessage, opts);
    this.param = opts.param;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/**
 * No HTTP exchange happened: connection refused, DNS failure, TLS failure, or (for reads, after
 * the retries) a connection lost mid-way. For a create/cancel/submit this error is thrown only
 * when the request provably never reached the server, so repeating it is safe.
 *
 * @example if (err instanceof TollgateNetworkError) scheduleRetry(); // never an UnknownOutcome
 */
export class TollgateNetworkError extends TollgateError {
  override name = 'TollgateNetworkError';
  constructor(shortMessage: string, opts: Omit<TollgateErrorOptions, 'code'> & { code?: TollgateErrorCode } = {}) {
    super(shortMessage, { code: 'network_error', ...opts });
  }
}

/**
 * A deadline passed: one request attempt exceeded `timeoutMs` (reads, after the retries), or
 * {@link TollgateClient.waitForOrder} reached its `timeoutMs` (then `lastOrder` is the last record seen).
 *
 * @example
 * catch (err) { if (err instanceof TollgateTimeoutError) console.log('still', err.lastOrder?.status); }
 */
export class TollgateTimeoutError extends TollgateError {
  override name = 'TollgateTimeoutError';
  readonly timeoutMs: number;
  /** waitForOrder only: the last order status record observed before the deadline. */
  readonly lastOrder: unknown;
  constructor(shortMessage: string, opts: Omit<TollgateErrorOptions, 'code'> & { timeoutMs: number; lastOrder?: unknown }) {
    super(shortMessage, { code: 'timeout', ...opts });
    this.timeoutMs = opts.timeoutMs;
    this.lastOrder = opts.lastOrder;
  }
}

/** What a caller needs to reconcile a create/cancel/submit whose outcome is unknown. */
export interface UnknownOutcomeDetails {
  method: 'POST';
  /** The request path, e.g. `/api/v1/orders`. */
  path: string;
  /** The wire body that was sent (snake_case, nested values already in their `*_json` strings). */
  requestBody: Readonly<Record<string, unknown>>;
  /** The exact JSON text that was sent (and signed). */
  rawRequestBody: string;
  /** createOrder: the merchant's order id to look the order up by. */
  dappOrderId?: string | undefined;
  /** createCheckoutSession: the correlation reference, when one was given. */
  clientReferenceId?: string | undefined;
  /** cancelOrder / submitCalldataSignature: the order the call was about. */
  orderId?: string | undefined;
}

/**
 * A non-retryable call (createOrder, createCheckoutSession, cancelOrder, submitCalldataSignature)
 * may or may not have been applied: the request was sent and then the connection failed, the
 * timeout fired, the server answered 5xx, or a success response could not be read. The SDK never
 * repeats such a call (the API has no idempotency key); reconcile with the details here before
 * creating anything again. `cause` says what happened.
 *
 * @example
 * catch (err) {
 *   if (err instanceof TollgateUnknownOutcomeError) {
 *     await db.markNeedsReconciliation(err.dappOrderId, err.rawRequestBody);
 *     return; // do not create a second payable order
 *   }
 * }
 */
export class TollgateUnknownOutcomeError extends TollgateError implements UnknownOutcomeDetails {
  override name = 'TollgateUnknownOutcomeError';
  readonly method: 'POST';
  readonly path: string;
  readonly requestBody: Readonly<Record<string, unknown>>;
  readonly rawRequestBody: string;
  readonly dappOrderId: string | undefined;
  readonly clientReferenceId: string | undefined;
  readonly orderId: string | undefined;

  constructor(shortMessage: string, details: UnknownOutcomeDetails, opts: Omit<TollgateErrorOptions, 'code'>) {
    super(shortMessage, { code: 'unknown_outcome', ...opts });
    this.method = details.method;
    this.path = details.path;
    this.requestBody = details.requestBody;
    this.rawRequestBody = details.rawRequestBody;
    this.dappOrderId = details.dappOrderId;
    this.clientReferenceId = details.clientReferenceId;
    this.orderId = details.orderId;
  }
}

/**
 * The server answered with the success status but a body the SDK cannot read (not JSON, or a
 * required field missing). For a non-retryable call it arrives as the `cause` of a
 * {@link TollgateUnknownOutcomeError}.
 *
 * @example if (err instanceof TollgateResponseError) console.error(err.body); // the raw text
 */
export class TollgateResponseError extends TollgateError {
  override name = 'TollgateResponseError';
  constructor(shortMessage: string, opts: Omit<TollgateErrorOptions, 'code'>) {
    super(shortMessage, { code: 'invalid_response', ...opts });
  }
}

/**
 * Misuse of the webhook verifier that no header could fix: a parsed object was passed instead of
 * the raw body bytes. An invalid signature is not an exception but a `{ ok: false }` result.
 *
 * @example verifyWebhook({ secret, headers, rawBody: JSON.parse(text) }) // throws TollgateWebhookError
 */
export class TollgateWebhookError extends TollgateError {
  override name = 'TollgateWebhookError';
  constructor(shortMessage: string, opts: Omit<TollgateErrorOptions, 'code'> = {}) {
    super(shortMessage, { code: 'webhook_raw_body_required', ...opts });
  }
}
