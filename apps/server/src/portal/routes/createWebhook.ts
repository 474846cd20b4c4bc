import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_ENABLED_ENDPOINTS } from '../../webhooks/limits.ts';
import { webhookService } from '../../webhooks/service.ts';
import { EndpointSchema, EventNameSchema, endpointView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';

export const portalCreateWebhook = defineRoute({
  method: 'POST',
  url: '/portal/api/webhooks',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Create a webhook endpoint; its signing secret is in this answer only',
  tags: ['portal'],
  body: Type.Object({ url: Type.String({ minLength: 1, maxLength: 2048 }), events: Type.Array(EventNameSchema, { minItems: 1, maxItems: 32 }) }, { additionalProperties: false }),
  response: { 201: Type.Intersect([EndpointSchema, Type.Object({ secret: Type.String({ description: 'shown once' }) })]) },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await webhookService(deps).createEndpoint(merchantOf(req.portal), req.body);
    switch (out.kind) {
      case 'merchant_not_found':
        throw new AppError('merchant_not_found', 'merchant not found');
      case 'limit':
        throw new AppError('webhook_endpoint_limit', `already ${MAX_ENABLED_ENDPOINTS} enabled webhook endpoints; disable one first`);
      case 'url_refused':
        throw new AppError(out.code, out.reason, 'url');
      case 'created':
        reply.status(201).header('cache-control', 'no-store');
        return { ...endpointView(out.endpoint, deps.clock.now()), secret: out.secret };
    }
  },
});
