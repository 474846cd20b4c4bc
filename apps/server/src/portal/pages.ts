// The portal page and its assets (built from packages/portal-ui): plain fastify routes, hidden from
// the OpenAPI document like the hosted checkout's. The page talks to /portal/api only.
import type { FastifyInstance } from 'fastify';
import { serveBundle } from '../hosted/bundle.ts';

/**
 * Only the page's own script and stylesheet, API calls to this origin, no inline anything, never
 * framed, forms post nowhere (the page sends JSON with fetch).
 */
export const PORTAL_CSP = ["default-src 'self'", "img-src 'self' data:", "connect-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'", "object-src 'none'"].join('; ');

/**
 * `GET /portal` (→ /portal/), `GET /portal/` and `GET /portal/assets/*`. Built once per process on
 * the first request (hosted/bundle.ts): a gateway that never serves the portal never loads esbuild.
 */
export async function registerPortalPages(app: FastifyInstance): Promise<void> {
  app.get('/portal', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/portal/', 302));
  serveBundle(app, {
    pages: ['/portal/'],
    assetsAt: '/portal/assets/',
    csp: PORTAL_CSP,
    build: async () => (await import('@tollgate/portal-ui')).buildPortalAssets(),
  });
}
