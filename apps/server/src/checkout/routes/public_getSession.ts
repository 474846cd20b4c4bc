import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { configuredChains } from '../../chain/registry.ts';
import { checkoutOf } from '../service.ts';
import { PublicSessionSchema, publicSessionView } from '../views.ts';

export const CheckoutIdParams = Type.Object({ checkout_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const publicGetCheckoutSession = defineRoute({
  method: 'GET',
  url: '/checkout/v1/sessions/:checkout_id',
  auth: 'public',
  summary: 'Public session view (no auth: the checkout id is a bearer capability)',
  tags: ['checkout'],
  params: CheckoutIdParams,
  rateLimit: 'public_read',
  response: { 200: PublicSessionSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const v = await checkoutOf(deps).getSession(req.params.checkout_id);
    // The message never echoes the id: error bodies end up in client-side logs.
    if (!v) throw new AppError('session_not_found', 'checkout session not found', 'checkout_id');
    // Terms and status of a capability: no shared cache may keep them.
    reply.header('cache-control', 'no-store');
    const svc = checkoutOf(deps);
    // Solana clusters are named and linked like EVM chains (plus the Wallet Standard chain name of
    // the cluster); a Solana order carries its `solana:` URL.
    const chains = configuredChains(deps.config).map(({ family, chain }) => ({ ...chain, ...(family.walletChain ? { walletChain: family.walletChain(chain) } : {}) }));
    return publicSessionView(v, deps.clock.now(), chains, (o) => svc.termsOf(o).payment_url);
  },
});
