// Thin adapters of the core for node:http / express-style `(req, res, next)` and fastify (a
// `preHandler`). They only translate the request in and the decision out; the receipt of a paid
// request is read back with `mppReceipt(req)` (a WeakMap: no framework type augmentation).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMppGuard, type MppDecision, type TollgateMppOptions, type VerifiedReceipt } from './core.ts';

const receipts = new WeakMap<object, VerifiedReceipt>();

/** The verified receipt of a request the middleware let through (undefined otherwise). */
export function mppReceipt(req: object): VerifiedReceipt | undefined {
  return receipts.get(req);
}

function requestOf(req: IncomingMessage & { originalUrl?: string }) {
  const auth = req.headers.authorization;
  return { method: req.method ?? 'GET', url: req.originalUrl ?? req.url ?? '/', authorization: auth };
}

/**
 * Express / connect / plain node:http middleware.
 * @example app.get('/api/data', tollgateMpp({ gateway, merchantId, route: 'GET:api:data' }), handler)
 */
export function tollgateMpp(o: TollgateMppOptions) {
  const guard = createMppGuard(o);
  return (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void => {
    guard.check(requestOf(req)).then((d: MppDecision) => {
      if (d.kind === 'respond') {
        res.writeHead(d.status, d.headers);
        res.end(d.body);
        return;
      }
      receipts.set(req, d.receipt);
      res.setHeader('payment-receipt', d.receipt.paymentReceipt);
      next();
    }, next);
  };
}

/** The slice of fastify's request and reply the adapter uses (no dependency on fastify's types). */
interface FastifyLikeRequest {
  raw: IncomingMessage;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}
interface FastifyLikeReply {
  code(status: number): FastifyLikeReply;
  headers(h: Record<string, string>): FastifyLikeReply;
  header(k: string, v: string): FastifyLikeReply;
  send(body: string): unknown;
}

/**
 * A fastify `preHandler` (route option or hook).
 * @example app.get('/api/data', { preHandler: tollgateMppFastify({ gateway, merchantId, route: 'GET:api:data' }) }, handler)
 */
export function tollgateMppFastify(o: TollgateMppOptions) {
  const guard = createMppGuard(o);
  return async (request: FastifyLikeRequest, reply: FastifyLikeReply): Promise<void> => {
    const d = await guard.check({ method: request.method, url: request.url, authorization: request.headers.authorization });
    if (d.kind === 'respond') {
      await reply.code(d.status).headers(d.headers).send(d.body);
      return;
    }
    receipts.set(request, d.receipt);
    reply.header('payment-receipt', d.receipt.paymentReceipt);
  };
}

/** The slice of Hono's `Context` the adapter uses (no dependency on hono's types). */
interface HonoLikeContext {
  req: { method: string; url: string; header(name: string): string | undefined; raw: object };
  header(name: string, value: string): void;
  body(data: string, status: number, headers: Record<string, string>): Response;
}

/**
 * A Hono middleware. Hono hands the full URL; the guard gets its path and query, like the others.
 * The receipt is read with `mppReceipt(c.req.raw)` (the standard `Request` of this call).
 * @example app.get('/api/data', tollgateMppHono({ gateway, merchantId, route: 'GET:api:data' }), (c) => c.json(...))
 */
export function tollgateMppHono(o: TollgateMppOptions) {
  const guard = createMppGuard(o);
  return async (c: HonoLikeContext, next: () => Promise<void>): Promise<Response | undefined> => {
    const u = new URL(c.req.url);
    const d = await guard.check({ method: c.req.method, url: u.pathname + u.search, authorization: c.req.header('authorization') });
    if (d.kind === 'respond') return c.body(d.body, d.status, d.headers);
    receipts.set(c.req.raw, d.receipt);
    c.header('payment-receipt', d.receipt.paymentReceipt);
    await next();
  };
}
