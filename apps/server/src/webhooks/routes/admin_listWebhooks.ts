import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../service.ts';
import { EndpointSchema, MerchantIdParams, endpointView } from './views.ts';

export const adminListWebhooks = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/webhooks',
  auth: 'admin',
  summary: "List a merchant's webhook endpoints (never their secrets)",
  tags: ['webhooks'],
  params: MerchantIdParams,
  response: { 200: Type.Object({ webhooks: Type.Array(EndpointSchema) }) },
  async handler(req, _reply, deps) {
    const rows = await webhookService(deps).listEndpoints(req.params.merchant_id);
    if (!rows) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    const now = deps.clock.now();
    return { webhooks: rows.map((r) => endpointView(r, now)) };
  },
});
