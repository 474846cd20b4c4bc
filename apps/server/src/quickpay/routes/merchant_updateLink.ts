import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';
import { LinkIdParams, LinkUpdateBody } from './schemas.ts';

export const merchantUpdateLink = defineRoute({
  method: 'POST',
  url: '/api/v1/payment-links/:link_id',
  auth: 'merchant',
  summary: 'Change a link’s limits, expiry or activity (`active: false` deactivates it); what it sells never changes',
  tags: ['quick-pay'],
  params: LinkIdParams,
  body: LinkUpdateBody,
  response: { 200: LinkSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).updateLink(req.merchant.merchantId, req.params.link_id, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return linkView(out.link, deps.config.publicBaseUrl);
  },
});
