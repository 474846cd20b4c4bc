import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_ENABLED_ENDPOINTS } from '../limits.ts';
import { webhookService } from '../service.ts';
import { EndpointSchema, EventNameSchema, MerchantIdParams, endpointView } from './views.ts';

export const adminCreateWebhook = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhooks',
  auth: 'admin',
  summary: `Create a webhook endpoint; its signing secret (whsec_…) is shown once. At most ${MAX_ENABLED_ENDPOINTS} enabled endpoints`,
  tags: ['webhooks'],
  params: MerchantIdParams,
  body: Type.Object(
    {
      url: Type.String({ minLength: 1, maxLength: 2048, description: 'https in production; public addresses only' }),
      events: Type.Array(EventNameSchema, { minItems: 1, maxItems: 32, description: 'the events this endpoint receives' }),
    },
    { additionalProperties: false },
  ),
  response: { 201: Type.Intersect([EndpointSchema, Type.Object({ secret: Type.String({ description: 'shown once; store it now' }) })]) },
  async handler(req, reply, deps) {
    const out = await webhookService(deps).createEndpoint(req.params.merchant_id, req.body);
    switch (out.kind) {
      case 'merchant_not_found':
        throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
      case 'limit':
        throw new AppError('webhook_endpoint_limit', `merchant already has ${MAX_ENABLED_ENDPOINTS} enabled webhook endpoints; disable one first`);
      case 'url_refused':
        throw new AppError(out.code, out.reason, 'url');
      case 'created':
        reply.status(201);
        return { ...endpointView(out.endpoint, deps.clock.now()), secret: out.secret };
    }
  },
});
