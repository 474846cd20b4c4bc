import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../service.ts';
import { EventNameSchema, MerchantIdParams } from './views.ts';

export const adminTriggerWebhookEvent = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhooks/trigger',
  auth: 'admin',
  summary: 'Emit a realistic test event (payload marked livemode: false, test: true) to the merchant endpoints through the outbox',
  tags: ['webhooks'],
  params: MerchantIdParams,
  body: Type.Object({ event: EventNameSchema }, { additionalProperties: false }),
  response: { 201: Type.Object({ event_id: Type.String(), event: Type.String(), deliveries: Type.Integer({ description: 'endpoints it was queued for' }) }) },
  async handler(req, reply, deps) {
    const out = await webhookService(deps).trigger(req.params.merchant_id, req.body.event);
    if (out.kind === 'merchant_not_found') throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    reply.status(201);
    return { event_id: out.eventId, event: req.body.event, deliveries: out.deliveries };
  },
});
