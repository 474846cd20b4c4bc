import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../../webhooks/service.ts';
import { DeliverySchema, deliveryView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';

export const portalRedeliver = defineRoute({
  method: 'POST',
  url: '/portal/api/webhook-deliveries/:delivery_id/redeliver',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Redeliver one delivery: delivered/dead → a new delivery (history kept); failing → retried now',
  tags: ['portal'],
  params: Type.Object({ delivery_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  response: { 200: Type.Object({ result: Type.Union([Type.Literal('redelivered'), Type.Literal('requeued'), Type.Literal('already_queued')]), delivery: DeliverySchema }) },
  errors: [403, 409],
  async handler(req, _reply, deps) {
    const out = await webhookService(deps).redeliver(merchantOf(req.portal), req.params.delivery_id);
    if (out.kind === 'not_found') throw new AppError('delivery_not_found', 'no such webhook delivery', 'delivery_id');
    if (out.kind === 'endpoint_disabled') throw new AppError('webhook_endpoint_disabled', 'the endpoint of this delivery is disabled; enable it first');
    return { result: out.kind, delivery: deliveryView(out.delivery) };
  },
});
