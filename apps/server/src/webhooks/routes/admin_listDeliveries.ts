import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../service.ts';
import { DeliverySchema, DeliveryStatusSchema, EventNameSchema, IntString, MerchantIdParams, deliveryView } from './views.ts';

const MAX_LIMIT = 200;

export const adminListDeliveries = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/webhook-deliveries',
  auth: 'admin',
  summary: 'List webhook deliveries with their attempts, newest first; filter by event, order or status',
  tags: ['webhooks'],
  params: MerchantIdParams,
  querystring: Type.Object(
    {
      event: Type.Optional(EventNameSchema),
      order_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      status: Type.Optional(DeliveryStatusSchema),
      before: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a delivery_id: the page after it' })),
      limit: Type.Optional(IntString(MAX_LIMIT)),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ deliveries: Type.Array(DeliverySchema) }) },
  async handler(req, _reply, deps) {
    const q = req.query;
    const limit = Math.min(Math.max(Number(q.limit ?? 50), 1), MAX_LIMIT);
    const rows = await webhookService(deps).listDeliveries(req.params.merchant_id, { event: q.event, orderId: q.order_id, status: q.status, before: q.before, limit });
    if (!rows) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return { deliveries: rows.map(deliveryView) };
  },
});
