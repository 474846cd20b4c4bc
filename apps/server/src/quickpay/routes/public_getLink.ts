import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { linkPaymentOptions } from '../rails/crypto.ts';
import { quickpayOf } from '../service.ts';
import { paymentOptions, PublicLinkSchema, publicLinkView } from '../views.ts';
import { LinkIdParams } from './schemas.ts';

export const publicGetLink = defineRoute({
  method: 'GET',
  url: '/quickpay/v1/links/:link_id',
  auth: 'public',
  summary: 'Public view of a payment link: product or amount range, rails, chain/token options, state',
  tags: ['quick-pay'],
  params: LinkIdParams,
  rateLimit: 'public_read',
  response: { 200: PublicLinkSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const qp = quickpayOf(deps);
    const found = await qp.publicLink(req.params.link_id);
    if (!found) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    const state = await qp.linkState(found.link, found.product);
    const options = paymentOptions(await linkPaymentOptions(deps, found.link), found.product?.price ?? null, [...deps.config.chains, ...(deps.config.solanaChains ?? [])]);
    reply.header('cache-control', 'no-store');
    return publicLinkView(found, state, found.link.payment_rails.includes('crypto') ? options : [], deps.config.publicBaseUrl);
  },
});
