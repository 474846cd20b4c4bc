import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../../webhooks/service.ts';
import { EndpointSchema, endpointView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';

export const portalListWebhooks = defineRoute({
  method: 'GET',
  url: '/portal/api/webhooks',
  auth: 'portal',
  summary: 'Webhook endpoints of the merchant (secrets are never shown again)',
  tags: ['portal'],
  response: { 200: Type.Object({ webhooks: Type.Array(EndpointSchema) }) },
  async handler(req, _reply, deps) {
    const rows = await webhookService(deps).listEndpoints(merchantOf(req.portal));
    if (!rows) throw new AppError('merchant_not_found', 'merchant not found');
    return { webhooks: rows.map((e) => endpointView(e, deps.clock.now())) };
  },
});
