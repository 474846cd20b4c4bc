// The portal page and its assets (built from packages/portal-ui): plain fastify routes, hidden from
// the OpenAPI document like the hosted checkout's. The page talks to /portal/api only.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.ts';
import { asset, COMMON_HEADERS, sendAsset, type Asset } from '../hosted/routes.ts';

/**
 * Only the page's own script and stylesheet, API calls to this origin, no inline anything, never
 * framed, forms post nowhere (the page sends JSON with fetch).
 */
export const PORTAL_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

interface Prepared {
  html: Buffer;
  js: Asset;
  css: Asset;
  icon: Asset;
}

/**
 * `GET /portal` (→ /portal/), `GET /portal/` and `GET /portal/assets/*`. Built once per process on
 * the first request (esbuild), like the hosted checkout: a gateway that never serves the portal
 * never loads esbuild.
 */
export async function registerPortalPages(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  let prepared: Promise<Prepared> | undefined;
  const prepare = () =>
    (prepared ??= import('@tollgate/portal-ui')
      .then(({ buildPortalAssets }) => buildPortalAssets())
      .then((b) => ({
        html: Buffer.from(b.html, 'utf8'),
        js: asset(b.js, b.jsHash, 'text/javascript; charset=utf-8'),
        css: asset(b.css, b.cssHash, 'text/css; charset=utf-8'),
        icon: asset(b.favicon, b.faviconHash, 'image/svg+xml'),
      }))
      .catch((err: unknown) => {
        prepared = undefined;
        throw err;
      }));
  const hide = { schema: { hide: true } };
  app.get('/portal', hide, async (_req, reply) => reply.redirect('/portal/', 302));
  app.get('/portal/', hide, async (_req, reply) => {
    const { html } = await prepare();
    reply.headers({
      ...COMMON_HEADERS,
      'content-security-policy': PORTAL_CSP,
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
    });
    return reply.type('text/html; charset=utf-8').send(html);
  });
  app.get('/portal/assets/app.js', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).js));
  app.get('/portal/assets/app.css', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).css));
  app.get('/portal/assets/favicon.svg', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
}
