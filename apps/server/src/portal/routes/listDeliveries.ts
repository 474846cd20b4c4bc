import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../../webhooks/service.ts';
import { DeliverySchema, DeliveryStatusSchema, deliveryView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';

export const portalListDeliveries = defineRoute({
  method: 'GET',
  url: '/portal/api/webhook-deliveries',
  auth: 'portal',
  summary: 'Webhook deliveries with their attempts, newest first; filter by status or order; page with `before`',
  tags: ['portal'],
  querystring: Type.Object(
    {
      status: Type.Optional(DeliveryStatusSchema),
      order_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      before: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ deliveries: Type.Array(DeliverySchema) }) },
  async handler(req, _reply, deps) {
    const rows = await webhookService(deps).listDeliveries(merchantOf(req.portal), { status: req.query.status, orderId: req.query.order_id, before: req.query.before, limit: 50 });
    if (!rows) throw new AppError('merchant_not_found', 'merchant not found');
    return { deliveries: rows.map(deliveryView) };
  },
});
