import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';
import { LinkIdParams } from './schemas.ts';

export const merchantGetLink = defineRoute({
  method: 'GET',
  url: '/api/v1/payment-links/:link_id',
  auth: 'merchant',
  summary: 'One payment link',
  tags: ['quick-pay'],
  params: LinkIdParams,
  response: { 200: LinkSchema },
  async handler(req, _reply, deps) {
    const l = await quickpayOf(deps).getLink(req.merchant.merchantId, req.params.link_id);
    if (!l) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    return linkView(l, deps.config.publicBaseUrl);
  },
});
