import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../service.ts';
import { EndpointSchema, WebhookIdParams, endpointView } from './views.ts';

export const adminDisableWebhook = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhooks/:webhook_id/disable',
  auth: 'admin',
  summary: 'Disable a webhook endpoint: no new deliveries; pending ones wait until it is enabled again (idempotent)',
  tags: ['webhooks'],
  params: WebhookIdParams,
  response: { 200: EndpointSchema },
  async handler(req, _reply, deps) {
    const out = await webhookService(deps).setEnabled(req.params.merchant_id, req.params.webhook_id, false);
    if (out.kind !== 'ok') throw new AppError('webhook_endpoint_not_found', `no webhook endpoint ${req.params.webhook_id} for this merchant`, 'webhook_id');
    return endpointView(out.endpoint, deps.clock.now());
  },
});
