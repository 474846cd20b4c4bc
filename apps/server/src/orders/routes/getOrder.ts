import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { nonceRefusal } from '../../http/merchant-auth.ts';
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
  // The nonce goes in the statement that reads the order (orders/status-batch.ts): one round trip
  // and one commit per batch of reads instead of a nonce INSERT and then a SELECT per read.
  nonceInHandler: true,
  async handler(req, _reply, deps) {
    const out = await deps.orders.readStatus(req.merchant.merchantId, req.params.order_id, req.merchant.nonce);
    if (out.kind === 'replay') throw nonceRefusal('replay');
    if (out.kind === 'key_revoked') throw nonceRefusal('revoked');
    if (out.kind === 'not_found') throw new AppError('order_not_found', 'order not found', 'order_id');
    return orderStatusRecord(out.order, out.order.observed);
  },
});
