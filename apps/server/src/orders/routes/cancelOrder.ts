import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderStatusRecordSchema, orderStatusRecord } from '../views.ts';
import { OrderIdParams } from './getOrder.ts';

export const cancelOrder = defineRoute({
  method: 'POST',
  url: '/api/v1/orders/:order_id/cancel',
  auth: 'merchant',
  summary: 'Cancel an unpaid CHECKOUT_VERIFIED order and release its reserved fee (not a refund)',
  tags: ['orders'],
  params: OrderIdParams,
  body: Type.Object({}, { additionalProperties: false, description: 'empty object, or no body at all' }),
  response: { 200: OrderStatusRecordSchema },
  async handler(req, _reply, deps) {
    const out = await deps.orders.cancelOrder(req.merchant.merchantId, req.params.order_id);
    switch (out.kind) {
      case 'not_found':
        throw new AppError('order_not_found', 'order not found', 'order_id');
      case 'rail_refused':
        throw new AppError(out.code, out.message);
      case 'not_cancellable':
        throw new AppError('order_not_cancellable', `${out.reason} (current state: ${out.status}, expected: CHECKOUT_VERIFIED)`);
      case 'cancelled':
        return orderStatusRecord(out.order);
    }
  },
});
