// The hosted quick-pay link page (`/quickpay/pay/<link id>`) and its assets, built from
// packages/checkout-ui (entry src/browser/quickpay.ts) like the checkout page: plain fastify routes,
// hidden from the OpenAPI document, same CSP and headers. Link ids are public (shared on purpose),
// so the id is in the path; the page reads it there.
import type { FastifyInstance } from 'fastify';
import { asset, CHECKOUT_CSP, COMMON_HEADERS, sendAsset, type Asset } from './routes.ts';

interface Prepared {
  html: Buffer;
  js: Asset;
  css: Asset;
  icon: Asset;
}

/**
 * Registers `GET /quickpay/pay/:link_id` and `GET /quickpay/assets/{app.js,app.css,favicon.svg}`.
 * The bundle is built on the first request (esbuild), as for the checkout page.
 */
export async function registerQuickpayPages(app: FastifyInstance): Promise<void> {
  let prepared: Promise<Prepared> | undefined;
  const prepare = () =>
    (prepared ??= import('@tollgate/checkout-ui/quickpay')
      .then(({ buildQuickpayAssets }) => buildQuickpayAssets())
      .then((built) => ({
        html: Buffer.from(built.html, 'utf8'),
        js: asset(built.js, built.jsHash, 'text/javascript; charset=utf-8'),
        css: asset(built.css, built.cssHash, 'text/css; charset=utf-8'),
        icon: asset(built.favicon, built.faviconHash, 'image/svg+xml'),
      }))
      .catch((err: unknown) => {
        prepared = undefined;
        throw err;
      }));
  const hide = { schema: { hide: true } };

  app.get('/quickpay/pay/:link_id', hide, async (_req, reply) => {
    const { html } = await prepare();
    reply.headers({
      ...COMMON_HEADERS,
      'content-security-policy': CHECKOUT_CSP,
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
    });
    return reply.type('text/html; charset=utf-8').send(html);
  });
  app.get('/quickpay/assets/app.js', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).js));
  app.get('/quickpay/assets/app.css', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).css));
  app.get('/quickpay/assets/favicon.svg', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
}
