// The hosted quick-pay link page (`/quickpay/pay/<link id>`) and its assets, built from
// packages/checkout-ui (entry src/browser/quickpay.ts) like the checkout page: plain fastify routes,
// hidden from the OpenAPI document, same CSP and headers. Link ids are public (shared on purpose),
// so the id is in the path; the page reads it there.
import type { FastifyInstance } from 'fastify';
import { serveBundle } from './bundle.ts';
import { CHECKOUT_CSP } from './routes.ts';

/**
 * Registers `GET /quickpay/pay/:link_id`, GOAT's entry `GET /quickpay/:goat_id` and `GET /quickpay/assets/{app.js,app.css,favicon.svg}`.
 * The bundle is built on the first request (esbuild), as for the checkout page.
 */
export async function registerQuickpayPages(app: FastifyInstance): Promise<void> {
  serveBundle(app, {
    pages: ['/quickpay/pay/:link_id'],
    assetsAt: '/quickpay/assets/',
    csp: CHECKOUT_CSP,
    build: async () => (await import('@tollgate/checkout-ui/quickpay')).buildQuickpayAssets(),
  });
  // GOAT's quick-pay web entry, `/quickpay/<merchant_id>` (quickpay/goat/target.ts): a payment
  // link's id goes to its hosted page; a merchant id (no page of its own) to its agent document.
  app.get('/quickpay/:goat_id', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { goat_id: string }).goat_id;
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    reply.header('cache-control', 'no-store');
    return reply.redirect(id.startsWith('pl_') ? `/quickpay/pay/${id}` : `/quickpay/${id}/agent.md`, 302);
  });
}
