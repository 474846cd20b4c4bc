import { defineRoute } from '../../../http/route.ts';
import { OrderIdParams } from '../../../orders/routes/getOrder.ts';
import { cardsOf } from '../index.ts';
import { CardRefundSchema, RefundBodySchema } from '../views.ts';
import { refundAnswer } from './refundOrder.ts';

/** Operator: refund a card order of any merchant (same rules as the merchant route). */
export const adminRefundCardOrder = defineRoute({
  method: 'POST',
  url: '/admin/v1/orders/:order_id/card/refunds',
  auth: 'admin',
  summary: 'Refund a card order through the card processor',
  tags: ['admin'],
  params: OrderIdParams,
  body: RefundBodySchema,
  response: { 200: CardRefundSchema },
  errors: [503],
  async handler(req, _reply, deps) {
    return refundAnswer(await cardsOf(deps).refund({ orderId: req.params.order_id, amount: req.body.amount, reason: req.body.reason, by: 'operator' }));
  },
});
