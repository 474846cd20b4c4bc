import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdParams } from '../../merchants/routes/views.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';
import { LinkCreateBody } from './schemas.ts';

export const adminCreateLink = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/payment-links',
  auth: 'admin',
  summary: 'Create a payment link for a merchant (same body as POST /api/v1/payment-links)',
  tags: ['admin'],
  params: MerchantIdParams,
  body: LinkCreateBody,
  response: { 200: LinkSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).createLink(req.params.merchant_id, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return linkView(out.link, deps.config.publicBaseUrl);
  },
});
