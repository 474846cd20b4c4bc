import { Type } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import { defineRoute } from '../../http/route.ts';
import { FEE_DECIMALS } from '../../config/load.ts';
import { AppError } from '../../http/errors.ts';
import { OrderStatusRecordSchema } from '../../orders/views.ts';
import { DeliverySchema, deliveryView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';
import { orderDetail } from '../data/service.ts';

export const portalGetOrder = defineRoute({
  method: 'GET',
  url: '/portal/api/orders/:order_id',
  auth: 'portal',
  summary: "An order of the session's merchant: status record, state timeline (audit trail), transfers seen, proof, explorer link, webhook deliveries; 404 for another merchant's order",
  tags: ['portal'],
  params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  response: {
    200: Type.Object({
      order: OrderStatusRecordSchema,
      decimals: Type.Integer(),
      amount: Type.String({ description: 'amount_wei in token units' }),
      fee: Type.String({ description: 'the order fee (fee units, 2+ decimals)' }),
      timeline: Type.Array(Type.Object({ from_status: Type.Optional(Type.String()), to_status: Type.String(), trigger: Type.String(), at: Type.String() })),
      proof: Type.Optional(Type.Object({ payload: Type.Record(Type.String(), Type.Union([Type.String(), Type.Integer()])), signature: Type.String() })),
      explorer_url: Type.Optional(Type.String()),
      deliveries: Type.Array(DeliverySchema),
    }),
  },
  async handler(req, _reply, deps) {
    const d = await orderDetail(deps, merchantOf(req.portal), req.params.order_id);
    if (!d) throw new AppError('order_not_found', 'order not found', 'order_id');
    return {
      order: d.order,
      decimals: d.decimals,
      amount: formatUnits(BigInt(d.order.amount_wei), d.decimals),
      fee: formatUnits(BigInt(d.fee_amount), FEE_DECIMALS, 2),
      timeline: d.timeline.map((t) => ({ ...(t.from_status ? { from_status: t.from_status } : {}), to_status: t.to_status, trigger: t.trigger, at: t.created_at.toISOString() })),
      ...(d.proof ? { proof: d.proof } : {}),
      ...(d.explorerUrl ? { explorer_url: d.explorerUrl } : {}),
      deliveries: d.deliveries.map(deliveryView),
    };
  },
});
