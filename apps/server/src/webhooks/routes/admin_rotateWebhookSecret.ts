import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { DEFAULT_ROTATION_OVERLAP_SECONDS, MAX_ROTATION_OVERLAP_SECONDS } from '../limits.ts';
import { webhookService } from '../service.ts';
import { EndpointSchema, WebhookIdParams, endpointView } from './views.ts';

export const adminRotateWebhookSecret = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhooks/:webhook_id/rotate-secret',
  auth: 'admin',
  summary: 'Rotate the signing secret (new secret shown once); the previous one keeps signing during the overlap',
  tags: ['webhooks'],
  params: WebhookIdParams,
  body: Type.Object(
    {
      overlap_seconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_ROTATION_OVERLAP_SECONDS,
          description: `how long the previous secret keeps signing (default ${DEFAULT_ROTATION_OVERLAP_SECONDS}, at most 7 days; 0 switches at once)`,
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Intersect([EndpointSchema, Type.Object({ secret: Type.String({ description: 'the new secret, shown once' }) })]) },
  async handler(req, _reply, deps) {
    const out = await webhookService(deps).rotateSecret(req.params.merchant_id, req.params.webhook_id, req.body.overlap_seconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS);
    if (out.kind === 'not_found') throw new AppError('webhook_endpoint_not_found', `no webhook endpoint ${req.params.webhook_id} for this merchant`, 'webhook_id');
    return { ...endpointView(out.endpoint, deps.clock.now()), secret: out.secret };
  },
});
