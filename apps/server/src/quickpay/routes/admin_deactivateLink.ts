import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';

export const adminDeactivateLink = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/payment-links/:link_id/deactivate',
  auth: 'admin',
  summary: 'Deactivate a payment link (no new sessions; sessions already open can still be paid)',
  tags: ['admin'],
  params: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 100 }), link_id: Type.String({ minLength: 1, maxLength: 100 }) }),
  response: { 200: LinkSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).updateLink(req.params.merchant_id, req.params.link_id, { active: false });
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return linkView(out.link, deps.config.publicBaseUrl);
  },
});
