import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderIdParams } from '../../orders/routes/getOrder.ts';
import { listOrderRefunds } from '../service.ts';
import { RefundSchema } from '../views.ts';

/** The refunds of an order, every rail, oldest first (docs/refunds.md). */
export const listRefunds = defineRoute({
  method: 'GET',
  url: '/api/v1/orders/:order_id/refunds',
  auth: 'merchant',
  summary: 'List the refunds of an order',
  tags: ['orders'],
  params: OrderIdParams,
  response: { 200: Type.Object({ refunds: Type.Array(RefundSchema) }) },
  async handler(req, _reply, deps) {
    const refunds = await listOrderRefunds(deps.db, req.merchant.merchantId, req.params.order_id);
    if (!refunds) throw new AppError('order_not_found', 'order not found', 'order_id');
    return { refunds };
  },
});
