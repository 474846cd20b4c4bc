import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';
import { LinkCreateBody } from './schemas.ts';

export const merchantCreateLink = defineRoute({
  method: 'POST',
  url: '/api/v1/payment-links',
  auth: 'merchant',
  summary: 'Create a payment link: one product, or any amount between min_amount and max_amount',
  tags: ['quick-pay'],
  body: LinkCreateBody,
  response: { 200: LinkSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).createLink(req.merchant.merchantId, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return linkView(out.link, deps.config.publicBaseUrl);
  },
});
