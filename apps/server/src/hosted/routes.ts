// The hosted checkout page and its two assets: plain fastify routes (HTML and static files, not API:
// hidden from the OpenAPI document). The checkout id travels in the URL fragment
// (`/checkout/pay#cs_…`), so it never reaches these routes or a server log.
import { isId } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import { COMMON_HEADERS, sendAsset, serveBundle } from './bundle.ts';

/**
 * The page's policy: only its own script and stylesheet, API calls only to this origin, images from
 * this origin, https (the merchant logo) or data: (EIP-6963 wallet icons); never framed.
 */
export const CHECKOUT_CSP = ["default-src 'self'", "img-src 'self' https: data:", "connect-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'", "object-src 'none'"].join('; ');

/**
 * Registers `GET /checkout/pay` (the page), `GET /checkout` (GOAT's SDK entry: a redirect to it), `GET /checkout/assets/{app.js,app.css,favicon.svg}`
 * and `GET /favicon.ico`, built on the first request (hosted/bundle.ts).
 *
 * @example await registerHostedPages(app);
 */
export async function registerHostedPages(app: FastifyInstance): Promise<void> {
  const prepare = serveBundle(app, {
    pages: ['/checkout/pay'],
    // Opened by GOAT's browser checkout SDK (`o` = its page's origin, browser/opener.ts), the page
    // must keep window.opener to send it the goat:* messages: COOP same-origin would sever it. The
    // page itself decides whether `o` may hear anything (the session's return origins).
    coop: (req) => ((req.query as Record<string, unknown>).o ? 'unsafe-none' : 'same-origin'),
    assetsAt: '/checkout/assets/',
    csp: CHECKOUT_CSP,
    build: async () => (await import('@tollgate/checkout-ui')).buildCheckoutAssets(),
  });
  // GOAT's checkout SDK opens `/checkout?cs=<id>&o=…&n=…`: the id moves into the fragment, where
  // Tollgate's checkout URLs keep it (out of later requests, logs and Referer), the rest stays in
  // the query. A malformed or missing id leads to the page's "incomplete link" screen.
  app.get('/checkout', { schema: { hide: true } }, async (req, reply) => {
    const q = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
    const cs = q.get('cs') ?? '';
    q.delete('cs');
    const rest = q.toString();
    reply.headers({ ...COMMON_HEADERS, 'cache-control': 'no-store' });
    return reply.redirect(`/checkout/pay${rest ? `?${rest}` : ''}${isId('cs', cs) ? `#${cs}` : ''}`, 302);
  });
  // Browsers ask for /favicon.ico on their own (e.g. for the JSON routes opened in a tab): the same
  // SVG, which every current browser accepts there, instead of a 404 in every log.
  app.get('/favicon.ico', { schema: { hide: true } }, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
}
