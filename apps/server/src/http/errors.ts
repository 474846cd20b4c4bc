import type { TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorStatus, type ErrorCode, type ErrorEnvelope } from '@tollgate/protocol';
import { logSafeError } from '../db/log-safe.ts';

/**
 * An expected, client-facing failure: a code from the closed catalog of `@tollgate/protocol`
 * (which fixes the HTTP status), a message for humans and, for input errors, the offending field.
 * Services return typed outcomes; routes turn the failing ones into an AppError.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly param?: string;
  constructor(code: ErrorCode, message: string, param?: string, status?: number) {
    super(message);
    this.code = code;
    this.param = param;
    this.name = 'AppError';
    this.status = status ?? errorStatus(code);
  }
}

/**
 * A service could not reach a dependency (database down, or not answering within the pool's query
 * timeout): 503 with the envelope, never a hang.
 */
function isOutage(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Query read timeout/i.test(String((err as Error)?.message));
  // node network errors, and Postgres admin shutdown / cannot connect classes (57P, 08)
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(code) || code.startsWith('57P') || code.startsWith('08');
}

/**
 * A route whose clients read errors in another shape (RouteDef.errorWire: GOAT's machine-payment
 * wire on /mpp/v1/challenge and /verify puts the code in `error`). Every other route answers the
 * envelope as it is; the wire only re-shapes it, so codes and statuses stay the catalog's.
 */
export interface ErrorWire {
  /** The error body's schema (OpenAPI, and fastify's serializer keeps only what it lists). */
  schema: TSchema;
  body(envelope: ErrorEnvelope): object;
}

function send(reply: FastifyReply, status: number, code: ErrorCode, message: string, param?: string) {
  const body: ErrorEnvelope = { error: message, code, request_id: reply.request.id };
  if (param) body.param = param;
  if (code === 'rate_limited' && !reply.getHeader('retry-after')) reply.header('retry-after', '1');
  const wire = (reply.request.routeOptions?.config as { errorWire?: ErrorWire } | undefined)?.errorWire;
  return reply
    .status(status)
    .type('application/json')
    .send(wire ? wire.body(body) : body);
}

/** Maps an ajv validation error to its field name (`/chain_id` → `chain_id`). */
function paramOf(err: FastifyError): string | undefined {
  const v = err.validation?.[0];
  if (!v) return undefined;
  const missing = (v.params as { missingProperty?: string; additionalProperty?: string }) ?? {};
  const path = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const extra = missing.missingProperty ?? missing.additionalProperty;
  return [path, extra].filter(Boolean).join('.') || undefined;
}

/** Maps fastify's own errors onto the catalog; everything else unknown is a 500 (and logged). */
function classify(err: FastifyError): { status: number; code: ErrorCode; message: string; param?: string } | undefined {
  if (err.validation) {
    const v = err.validation[0];
    const param = paramOf(err);
    const msg = v?.keyword === 'additionalProperties' ? `unknown field ${param}` : `${param ?? err.validationContext ?? 'request'} ${v?.message ?? 'is invalid'}`;
    return { status: 400, code: 'invalid_request', message: msg, param };
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'unsupported_media_type', message: 'Content-Type must be application/json' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: 'payload_too_large', message: 'request body is too large' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: 'invalid_json', message: 'request body is not valid JSON' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: 'invalid_request', message: 'Content-Length does not match the body' };
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return { status: 400, code: 'invalid_json', message: 'request body is not valid JSON' };
  }
  if (err.statusCode === 429) return { status: 429, code: 'rate_limited', message: 'too many requests' };
  return undefined;
}

/**
 * Fastify's `frameworkErrors`: the router refuses some URLs before any route or hook runs (a
 * malformed %-escape such as `/orders/%zz`, a path parameter over `maxParamLength`, 100 characters).
 * Fastify's default answer is its own JSON shape (`FST_ERR_BAD_URL`, a 414); this gives them the
 * envelope (400 invalid_request) like every other failure. Found by the route fuzzer.
 */
export function onFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  // The onSend hook that sets X-Request-Id does not run for a request no route matched yet.
  reply.header('x-request-id', req.id);
  const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the URL path is malformed';
  return send(reply, 400, 'invalid_request', message);
}

/** One error handler and one not-found handler for the whole app: every failure gets the envelope. */
export function installErrorHandling(app: FastifyInstance, routePatterns: () => { method: string; regex: RegExp }[]): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) return send(reply, err.status, err.code, err.message, err.param);
    const known = classify(err);
    if (known) return send(reply, known.status, known.code, known.message, known.param);
    if (isOutage(err)) {
      req.log.warn({ error: logSafeError(err) }, 'dependency unavailable');
      reply.header('retry-after', '5');
      return send(reply, 503, 'service_unavailable', 'service temporarily unavailable, retry later');
    }
    // Not under `err`: pino's error serializer would rebuild it (type, stack) from any object with a message.
    req.log.error({ error: logSafeError(err) }, 'unhandled error');
    return send(reply, 500, 'internal_error', 'internal error');
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = routePatterns()
      .filter((r) => r.regex.test(path))
      .map((r) => r.method);
    if (allowed.length > 0) {
      reply.header('allow', [...new Set(allowed)].join(', '));
      return send(reply, 405, 'method_not_allowed', `method ${req.method} not allowed on this path`);
    }
    return send(reply, 404, 'not_found', 'no such route');
  });
}

/** `/api/v1/orders/:order_id/proof` → a regex matching concrete paths. */
export function patternToRegex(url: string): RegExp {
  const body = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}
