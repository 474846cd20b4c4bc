import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../service.ts';
import { DeliveryIdParams, DeliverySchema, deliveryView } from './views.ts';

export const adminRedeliver = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhook-deliveries/:delivery_id/redeliver',
  auth: 'admin',
  summary: 'Redeliver one delivery: delivered/dead → a new delivery row (history kept); failing → retried now',
  tags: ['webhooks'],
  params: DeliveryIdParams,
  response: {
    200: Type.Object({
      result: Type.Union([Type.Literal('redelivered'), Type.Literal('requeued'), Type.Literal('already_queued')]),
      delivery: DeliverySchema,
    }),
  },
  errors: [409],
  async handler(req, _reply, deps) {
    const out = await webhookService(deps).redeliver(req.params.merchant_id, req.params.delivery_id);
    switch (out.kind) {
      case 'not_found':
        throw new AppError('delivery_not_found', `no webhook delivery ${req.params.delivery_id} for this merchant`, 'delivery_id');
      case 'endpoint_disabled':
        throw new AppError('webhook_endpoint_disabled', 'the endpoint of this delivery is disabled; enable it first');
      default:
        return { result: out.kind, delivery: deliveryView(out.delivery) };
    }
  },
});
