// The hosted checkout page and its two assets: plain fastify routes (HTML and static files, not API:
// hidden from the OpenAPI document). The checkout id travels in the URL fragment
// (`/checkout/pay#cs_…`), so it never reaches these routes or a server log.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.ts';
import { sendAsset, serveBundle } from './bundle.ts';

/**
 * The page's policy: only its own script and stylesheet, API calls only to this origin, images from
 * this origin, https (the merchant logo) or data: (EIP-6963 wallet icons); never framed.
 */
export const CHECKOUT_CSP = [
  "default-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

/**
 * Registers `GET /checkout/pay` (the page), `GET /checkout/assets/{app.js,app.css,favicon.svg}`
 * and `GET /favicon.ico`, built on the first request (hosted/bundle.ts).
 *
 * @example await registerHostedPages(app, deps);
 */
export async function registerHostedPages(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  const prepare = serveBundle(app, {
    pages: ['/checkout/pay'],
    assetsAt: '/checkout/assets/',
    csp: CHECKOUT_CSP,
    build: async () => (await import('@tollgate/checkout-ui')).buildCheckoutAssets(),
  });
  // Browsers ask for /favicon.ico on their own (e.g. for the JSON routes opened in a tab): the same
  // SVG, which every current browser accepts there, instead of a 404 in every log.
  app.get('/favicon.ico', { schema: { hide: true } }, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
}
