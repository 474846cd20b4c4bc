import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_ENABLED_ENDPOINTS } from '../limits.ts';
import { webhookService } from '../service.ts';
import { EndpointSchema, WebhookIdParams, endpointView } from './views.ts';

export const adminEnableWebhook = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhooks/:webhook_id/enable',
  auth: 'admin',
  summary: 'Enable a webhook endpoint again; paused deliveries resume (idempotent; counts toward the endpoint limit)',
  tags: ['webhooks'],
  params: WebhookIdParams,
  response: { 200: EndpointSchema },
  async handler(req, _reply, deps) {
    const out = await webhookService(deps).setEnabled(req.params.merchant_id, req.params.webhook_id, true);
    if (out.kind === 'not_found') throw new AppError('webhook_endpoint_not_found', `no webhook endpoint ${req.params.webhook_id} for this merchant`, 'webhook_id');
    if (out.kind === 'limit') throw new AppError('webhook_endpoint_limit', `merchant already has ${MAX_ENABLED_ENDPOINTS} enabled webhook endpoints; disable one first`);
    return endpointView(out.endpoint, deps.clock.now());
  },
});
