import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../../webhooks/service.ts';
import { EndpointSchema, endpointView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';

export const portalRotateWebhookSecret = defineRoute({
  method: 'POST',
  url: '/portal/api/webhooks/:webhook_id/rotate-secret',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'A new signing secret, in this answer only; the old one keeps signing for 24 h (or `overlap_seconds`)',
  tags: ['portal'],
  params: Type.Object({ webhook_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  body: Type.Object({ overlap_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86400 })) }, { additionalProperties: false }),
  response: { 200: Type.Intersect([EndpointSchema, Type.Object({ secret: Type.String({ description: 'shown once' }) })]) },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await webhookService(deps).rotateSecret(merchantOf(req.portal), req.params.webhook_id, req.body.overlap_seconds);
    if (out.kind === 'not_found') throw new AppError('webhook_endpoint_not_found', 'no such webhook endpoint', 'webhook_id');
    reply.header('cache-control', 'no-store');
    return { ...endpointView(out.endpoint, deps.clock.now()), secret: out.secret };
  },
});
