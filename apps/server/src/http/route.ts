import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { MerchantService } from '../merchants/service.ts';
import { requireAdmin } from './admin-auth.ts';
import { AppError, type ErrorWire } from './errors.ts';
import { authenticateMerchant, settleNonce, type AuthedMerchant } from './merchant-auth.ts';
import { ErrorEnvelopeSchema } from './schemas.ts';

type Auth = 'merchant' | 'admin' | 'public' | 'portal';

/**
 * What every route handler receives as its third argument. http/ itself uses these; the composition
 * root adds the rest of its services by augmenting this interface (deps.ts), so http/ names no
 * module above the core.
 */
export interface RouteDeps {
  config: Config;
  db: Database;
  clock: Clock;
  merchants: MerchantService;
}

/**
 * The portal's session types (`context`: what `req.portal` holds; `role`: RouteDef.portalRole),
 * declared by the portal itself (portal/http.ts augments this interface): http/ only carries them.
 * Exported for that augmentation, which no import shows (hence `@public` for knip).
 * @public
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation (portal/http.ts), which only an interface allows
export interface PortalAuthTypes {}
type PortalContext = PortalAuthTypes extends { context: infer C } ? C : never;
type PortalRole = PortalAuthTypes extends { role: infer R } ? R : never;

/** Authentication of `auth: 'portal'` routes (the portal's, passed by the composition root); `minRole` absent: the portal's least role. */
export type PortalAuthenticator = (req: FastifyRequest, minRole: PortalRole | undefined) => Promise<PortalContext>;

/**
 * Per-IP rate-limit classes of the public routes (429 rate_limited with Retry-After). A class, not
 * numbers, on each route: the operator tunes one number per class (HttpOptions.rateLimits).
 * - `public_read`: reads a hosted page polls (session view, status, merchant configuration). A page
 *   polling every 2 s uses 30/min; 120/min leaves room for several tabs behind one NAT address.
 * - `checkout_bind`: creates orders (fee reserves, live-terms slots); a payer binds a few times at
 *   most, so 20/min per address bounds how fast one client can churn a merchant's fee balance.
 * - `machine_payment`: challenge and verify of /mpp/v1. An agent pays per request and polls verify
 *   every second or two while a transfer becomes final; 600/min lets one address run ~5 paid
 *   requests/s and still bounds how many challenge rows one client can create.
 * - `machine_payer`: keyed by the payer a request names, not the IP (RouteDef.rateLimitBy): x402
 *   verify and settle per `authorization.from`, so one payer behind many addresses is bounded too
 *   (every settle spends the executor's gas). A payment is one verify and one settle: 120/min per
 *   route is two paid requests a second from one payer.
 */
export type RateLimitClass = 'public_read' | 'checkout_bind' | 'machine_payment' | 'machine_payer';
export interface RateLimit {
  max: number;
  timeWindowMs: number;
}
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitClass, RateLimit>> = Object.freeze({
  public_read: { max: 120, timeWindowMs: 60_000 },
  checkout_bind: { max: 20, timeWindowMs: 60_000 },
  machine_payment: { max: 600, timeWindowMs: 60_000 },
  machine_payer: { max: 120, timeWindowMs: 60_000 },
});
type StaticOr<T, D> = T extends TSchema ? Static<T> : D;

interface RouteRequest<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** Set on `auth: 'merchant'` routes: the merchant the signed API key belongs to. */
  merchant: AuthedMerchant;
  /** Set on `auth: 'portal'` routes: the signed-in portal session (cookie + CSRF + role checked). */
  portal: PortalContext;
  raw: FastifyRequest;
}

/**
 * One route = one file exporting one `defineRoute(...)`. The schemas drive validation (ajv),
 * the handler's TypeScript types and the OpenAPI document; `auth` picks the authentication hook.
 */
export interface RouteDef<B extends TSchema | undefined = TSchema | undefined, Q extends TSchema | undefined = TSchema | undefined, P extends TSchema | undefined = TSchema | undefined> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  auth: Auth;
  summary: string;
  tags: string[];
  body?: B;
  querystring?: Q;
  params?: P;
  /** Success responses by status code; errors always use the envelope. */
  response: Record<number, TSchema>;
  /** Failure codes this route can answer with (documentation only). */
  errors?: number[];
  /** Another shape of this route's error bodies (http/errors.ts ErrorWire); the envelope when absent. */
  errorWire?: ErrorWire;
  /** `auth: 'portal'` only: the least role the route admits (viewer < developer < owner < operator). */
  portalRole?: PortalRole;
  /** Per-IP rate limit of this route (none when absent). */
  rateLimit?: RateLimitClass;
  /**
   * A second limit of this route, per key read from the validated body (the x402 payer), in its
   * own class: checked after validation, before the handler; a body that yields no key is not
   * counted. The same plugin, store and 429 as the per-IP limit.
   */
  rateLimitBy?: { class: RateLimitClass; key(body: any): string | undefined };
  /**
   * `auth: 'merchant'` only: the handler consumes `req.merchant.nonce` inside its own write
   * instead of authentication doing it first (one commit instead of two on a hot path). Whatever
   * the handler does, a nonce still unsettled when it refuses the request — a validation error, a
   * 4xx outcome — is consumed before the response, and a replay answers 401 instead.
   */
  nonceInHandler?: true;
  /**
   * The JSON body reaches the handler as the exact string received, unparsed (`body` must be
   * `Type.String()`): a processor's webhook signature covers the raw bytes, and parsing first
   * would also apply the depth limit to a third party's payload.
   */
  rawBody?: true;
  handler(req: RouteRequest<StaticOr<B, undefined>, StaticOr<Q, Record<string, string>>, StaticOr<P, Record<string, string>>>, reply: FastifyReply, deps: RouteDeps): Promise<unknown>;
}

export function defineRoute<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, P extends TSchema | undefined = undefined>(def: RouteDef<B, Q, P>): RouteDef<B, Q, P> {
  return def;
}

declare module 'fastify' {
  interface FastifyRequest {
    merchant?: AuthedMerchant;
    portal?: PortalContext;
  }
}

const SECURITY: Record<Auth, Record<string, string[]>[] | undefined> = {
  merchant: [{ merchantHmac: [] }],
  admin: [{ adminBearer: [] }],
  public: undefined,
  portal: [{ portalSession: [] }],
};

/**
 * PostgreSQL text and jsonb cannot hold U+0000, so a NUL anywhere in a path parameter, query value
 * or body string would fail the query as a 500 (22021/22P05). It can never be valid input: refuse
 * it up front as 400 invalid_request naming the field. Found by the route fuzzer (`/merchants/%00`).
 */
function refuseNul(v: unknown, where: string, path = '', depth = 0): void {
  if (typeof v === 'string') {
    if (v.includes('\u0000')) throw new AppError('invalid_request', `${path || where} must not contain U+0000`, path || undefined);
    return;
  }
  // Deeper structures are refused by schema validation anyway (flat bodies, string arrays).
  if (typeof v !== 'object' || v === null || depth > 3) return;
  for (const [k, x] of Object.entries(v)) {
    if (k.includes('\u0000')) throw new AppError('invalid_request', `a ${where} field name must not contain U+0000`);
    refuseNul(x, where, path ? `${path}.${k}` : k, depth + 1);
  }
}

/**
 * Registers the routes of the readable list in `main.ts` with their auth hooks and, when `limits`
 * is given, their rate limits (@fastify/rate-limit must be registered before, with `global: false`).
 */
export function registerRoutes(app: FastifyInstance, routes: readonly RouteDef<any, any, any>[], deps: RouteDeps, limits?: Readonly<Record<RateLimitClass, RateLimit>>, portal?: PortalAuthenticator): void {
  for (const r of routes) {
    if (r.auth === 'portal' && !portal) throw new Error(`route ${r.method} ${r.url} needs the portal's authentication (buildHttpApp's plugins.portal)`);
    const limit = r.rateLimit && limits ? limits[r.rateLimit] : undefined;
    const response: Record<string, TSchema> = {};
    for (const [status, schema] of Object.entries(r.response)) response[status] = schema;
    for (const status of [400, 401, 404, ...(r.errors ?? [])]) response[String(status)] ??= r.errorWire?.schema ?? ErrorEnvelopeSchema;
    const deferNonce = r.auth === 'merchant' && r.nonceInHandler === true;
    const byBody = r.rateLimitBy && limits ? bodyRateLimit(app, limits[r.rateLimitBy.class], r.rateLimitBy.key) : undefined;
    app.route({
      method: r.method,
      url: r.url,
      // A deferred nonce must be settled even when the body fails validation: the handler runs
      // and rethrows the validation error after settling (see below).
      ...(deferNonce ? { attachValidation: true } : {}),
      ...(limit || r.rawBody || r.errorWire ? { config: { ...(limit ? { rateLimit: { max: limit.max, timeWindow: limit.timeWindowMs } } : {}), ...(r.rawBody ? { rawBody: true } : {}), ...(r.errorWire ? { errorWire: r.errorWire } : {}) } } : {}),
      schema: {
        summary: r.summary,
        tags: r.tags,
        ...(r.body ? { body: r.body } : {}),
        ...(r.querystring ? { querystring: r.querystring } : {}),
        ...(r.params ? { params: r.params } : {}),
        response,
        ...(SECURITY[r.auth] ? { security: SECURITY[r.auth] } : {}),
      },
      // Authentication runs before schema validation: an unauthenticated caller learns nothing
      // about the shape the route expects, and the signature covers the body as received.
      preValidation: async (req) => {
        // An absent body is an empty object (e.g. cancel with no body); its signature is the same.
        if (r.body && req.body === undefined) req.body = {};
        if (r.auth === 'merchant') req.merchant = await authenticateMerchant(req, deps, !deferNonce);
        else if (r.auth === 'admin') requireAdmin(req, deps.config.adminToken);
        else if (r.auth === 'portal') req.portal = await portal!(req, r.portalRole);
        try {
          refuseNul(req.params, 'path');
          refuseNul(req.query, 'query');
          refuseNul(req.body, 'body');
        } catch (err) {
          // A refusal before the handler uses up a deferred nonce too (the path is not signed: the
          // same headers must not be good for another path), and a replay's 401 wins.
          if (deferNonce) await settleNonce(req.merchant!.nonce, deps);
          throw err;
        }
      },
      ...(byBody ? { preHandler: byBody } : {}),
      handler: async (req, reply) => {
        const run = () => r.handler({ body: req.body, query: req.query, params: req.params, merchant: req.merchant!, portal: req.portal!, raw: req } as never, reply, deps);
        if (!deferNonce) return run();
        let out: unknown;
        try {
          if (req.validationError) throw req.validationError;
          out = await run();
        } catch (err) {
          // A refusal (4xx) used up the request: settle its nonce, and a replay's 401 wins over the
          // refusal. A failure (database unreachable, timeout, bug) leaves the nonce as the write
          // left it: consumed exactly when the statement that carried it committed; settling now
          // would only wait for the same outage a second time.
          const refusal = (err instanceof AppError && err.status < 500) || (err as { validation?: unknown }).validation !== undefined;
          if (refusal) await settleNonce(req.merchant!.nonce, deps);
          throw err;
        }
        await settleNonce(req.merchant!.nonce, deps);
        return out;
      },
    });
  }
}

/** RouteDef.rateLimitBy: @fastify/rate-limit's limiter keyed by the body, answered like the per-IP 429. */
function bodyRateLimit(app: FastifyInstance, limit: RateLimit, key: (body: any) => string | undefined) {
  const check = app.createRateLimit({
    max: limit.max,
    timeWindow: limit.timeWindowMs,
    keyGenerator: (req) => key(req.body) ?? '',
    allowList: (_req, k) => k === '',
  });
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const r = await check(req);
    if (r.isAllowed || !r.isExceeded) return;
    reply.header('retry-after', r.ttlInSeconds);
    throw new AppError('rate_limited', `too many requests for this payer; retry in ${r.ttlInSeconds} s`);
  };
}
