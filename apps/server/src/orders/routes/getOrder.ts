import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderStatusRecordSchema, orderStatusRecord } from '../views.ts';

export const OrderIdParams = Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const getOrder = defineRoute({
  method: 'GET',
  url: '/api/v1/orders/:order_id',
  auth: 'merchant',
  summary: 'Order status record',
  tags: ['orders'],
  params: OrderIdParams,
  response: { 200: OrderStatusRecordSchema },
  async handler(req, _reply, deps) {
    const o = await deps.orders.getOrderWithTransfers(req.merchant.merchantId, req.params.order_id);
    if (!o) throw new AppError('order_not_found', 'order not found', 'order_id');
    return orderStatusRecord(o, o.observed);
  },
});
