import Fastify, { type FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { Registry } from 'prom-client';
import { ERROR_CATALOG, jsonDepthExceeds, newId } from '@tollgate/protocol';
import type { BatchStats } from '../db/batcher.ts';
import { AppError, installErrorHandling, onFrameworkError, patternToRegex } from './errors.ts';
import { DEFAULT_RATE_LIMITS, registerRoutes, type PortalAuthenticator, type RateLimit, type RateLimitClass, type RouteDef, type RouteDeps } from './route.ts';
import { installObservability } from './observability.ts';
import { installBodyStallGuard, onClientError } from './transport.ts';
import { clientAddress, fastifyTrustProxy } from './client-address.ts';
import { AJV_OPTIONS, lazySchemaCompilers } from './compilers.ts';

/** Ids that are bearer capabilities: checkout sessions and quick-pay sessions. */
const CAPABILITY_IDS = /(cs|qps)_[A-Za-z0-9_-]+/g;

/**
 * The URL as logged. Checkout ids (`cs_`) and quick-pay session ids (`qps_`, which also name a card
 * quick-pay session's checkout) are bearer capabilities (never in a log line), and a query string
 * may carry anything a client put there by mistake (`?token=<admin token>`, an email): only the
 * parameter names are kept, every value becomes `[redacted]`.
 *
 * @example redactPath('/checkout/v1/sessions/cs_9x?token=abc&b') // => '/checkout/v1/sessions/cs_[redacted]?token=[redacted]&b'
 */
export function redactPath(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(CAPABILITY_IDS, '$1_[redacted]');
  if (q < 0) return path;
  const names = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      // A name can be a secret too (`?<token>`): names longer than 40 characters are redacted whole.
      const name = (eq < 0 ? pair : pair.slice(0, eq)).replace(CAPABILITY_IDS, '$1_[redacted]');
      const shown = name.length > 40 ? '[redacted]' : name;
      return eq < 0 ? shown : `${shown}=[redacted]`;
    });
  return `${path}?${names.join('&')}`;
}

/**
 * Deepest object/array nesting a request body may have. No route takes nested data (structured
 * fields travel as `*_json` strings); the bound is checked right after parsing, before
 * authentication, so no later step (HMAC canonicalization, validation) walks a hostile depth.
 */
const MAX_BODY_DEPTH = 32;

export interface HttpOptions {
  /** pino options; tests pass `false` for silence. */
  logger?: boolean | Record<string, unknown>;
  bodyLimit?: number;
  /**
   * Limits of the public rate-limit classes, per IP (`machine_payer`: per payer named in the body)
   * (route.ts DEFAULT_RATE_LIMITS by default);
   * `false` turns rate limiting off (a deployment whose gateway already limits). Counters live in
   * process memory: with N API processes behind a balancer an address gets up to N × max.
   */
  rateLimits?: Partial<Record<RateLimitClass, RateLimit>> | false;
  /** The Prometheus registry /metrics serves (the composition root's, with the operator metrics). */
  metricsRegistry?: Registry;
}

/**
 * What the composition root plugs into the app from the modules above the core: their pages
 * (registered in this order, before the routes), their group-commit counters for /metrics, and
 * the portal's authentication of `auth: 'portal'` routes.
 */
export interface HttpPlugins {
  pages?: readonly ((app: FastifyInstance) => Promise<void>)[];
  batchers?: Readonly<Record<string, () => BatchStats>>;
  portal?: PortalAuthenticator;
}

/**
 * Builds the fastify app: request ids, redacting JSON logs, one error envelope, health/metrics/
 * OpenAPI, and the routes of the list given by the composition root.
 */
export async function buildHttpApp(deps: RouteDeps, routes: readonly RouteDef<any, any, any>[], opts: HttpOptions = {}, plugins: HttpPlugins = {}): Promise<FastifyInstance> {
  const logger =
    opts.logger === false
      ? false
      : {
          level: deps.config.logLevel,
          redact: {
            // err.rawPacket: node's HTTP parser attaches the raw request bytes (Authorization and
            // X-Sign included) to a client error, which fastify logs at trace level.
            paths: ['req.headers["x-sign"]', 'req.headers.authorization', '*.api_secret', '*.secret', '*.apiSecret', 'err.rawPacket'],
            censor: '[redacted]',
          },
          serializers: {
            req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: redactPath(req.url), request_id: req.id }),
          },
          ...(typeof opts.logger === 'object' ? opts.logger : {}),
        };
  const app = Fastify({
    logger,
    bodyLimit: opts.bodyLimit ?? 64 * 1024,
    // Base58 like every Tollgate id: base64url's `_` and `-` let a random request id contain
    // `cs_…`, which the log redaction test rightly reads as a leaked checkout id (a CI flake).
    genReqId: () => newId('req'),
    // Sub-second stalls of a database must not hang clients forever.
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
    return503OnClosing: true,
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    // config.trustProxy (TRUST_PROXY): behind a reverse proxy, without it every client shares the
    // proxy's address and one budget of every per-address limit.
    trustProxy: fastifyTrustProxy(deps.config.trustProxy),
    ajv: AJV_OPTIONS,
    // Compiled on a route's first request, once per process (compilers.ts).
    schemaController: lazySchemaCompilers,
  });

  // JSON only: fastify's built-in text/plain parser would hand a string body to auth and
  // validation (a 401 or "body must be object") instead of the 415 the catalog promises.
  app.removeContentTypeParser('text/plain');
  // An absent body is fine (e.g. cancel takes `{}` or nothing); invalid JSON is a 400 with a code.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || body === undefined) return done(null, undefined);
    // Routes declared with `rawBody` (processor webhooks) verify a signature over the bytes as
    // sent: they get the string itself, after the same JSON and depth checks as every body.
    const raw = (req.routeOptions.config as { rawBody?: boolean } | undefined)?.rawBody === true;
    jsonParser(req, body as string, (err, value) => {
      if (err) return done(err, undefined);
      if (jsonDepthExceeds(value, MAX_BODY_DEPTH)) return done(new AppError('invalid_request', `request body nests deeper than ${MAX_BODY_DEPTH} levels`), undefined);
      done(null, raw ? body : value);
    });
  });

  // Callback style, not async: this runs on every response, and an async hook costs a promise each.
  // nosniff on every answer: a browser must never sniff a JSON body (which may echo merchant-chosen
  // strings) into HTML or script.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });

  const patterns: { method: string; regex: RegExp }[] = [];
  app.addHook('onRoute', (r) => {
    for (const m of [r.method].flat()) if (m !== 'HEAD') patterns.push({ method: m, regex: patternToRegex(r.url) });
  });
  installErrorHandling(app, () => patterns);
  installBodyStallGuard(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollgate',
        version: '0.1.0',
        description:
          'Stablecoin payment gateway. Errors use the envelope `{ error, code, param?, request_id }`. Codes:\n\n' +
          Object.entries(ERROR_CATALOG)
            .map(([code, v]) => `- \`${code}\` (${v.status}): ${v.description}`)
            .join('\n'),
      },
      components: {
        securitySchemes: {
          merchantHmac: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'with X-Timestamp, X-Nonce and X-Sign (HMAC-SHA256 of the canonical request string, see docs/authentication.md)' },
          adminBearer: { type: 'http', scheme: 'bearer' },
          portalSession: { type: 'apiKey', in: 'cookie', name: 'tollgate_portal', description: 'portal session cookie (`__Host-tollgate_portal` over https) set by POST /portal/api/login; unsafe methods also need the `X-CSRF-Token` header (docs/portal.md)' },
        },
      },
    },
  });
  // Per-route only (`global: false`): merchant routes are authenticated and admin routes are the
  // operator's; the public routes opt in through RouteDef.rateLimit. Refusals are thrown as an
  // AppError so they get the one error envelope; the plugin has set Retry-After by then.
  const limits = opts.rateLimits === false ? undefined : { ...DEFAULT_RATE_LIMITS, ...opts.rateLimits };
  if (limits) {
    await app.register(rateLimit, {
      global: false,
      keyGenerator: clientAddress,
      errorResponseBuilder: (_req, ctx) => new AppError('rate_limited', `too many requests; retry in ${ctx.after}`),
    });
  }
  installObservability(app, deps, plugins.batchers ?? {}, opts.metricsRegistry);
  for (const register of plugins.pages ?? []) await register(app);
  registerRoutes(app, routes, deps, limits, plugins.portal);
  return app;
}
