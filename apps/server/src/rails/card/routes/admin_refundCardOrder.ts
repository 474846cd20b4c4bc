import { defineRoute } from '../../../http/route.ts';
import { OrderIdParams } from '../../../orders/routes/getOrder.ts';
import { refundRecord, RefundBodySchema, RefundSchema } from '../../../refunds/views.ts';
import { refundAnswer } from '../../../refunds/routes/refundOrder.ts';
import { cardsOf } from '../index.ts';

/** Operator: refund a card order of any merchant (same rules as the merchant route). */
export const adminRefundCardOrder = defineRoute({
  method: 'POST',
  url: '/admin/v1/orders/:order_id/card/refunds',
  auth: 'admin',
  summary: 'Refund a card order through the card processor',
  tags: ['admin'],
  params: OrderIdParams,
  body: RefundBodySchema,
  response: { 200: RefundSchema },
  errors: [503],
  async handler(req, _reply, deps) {
    const out = await cardsOf(deps).refund({ orderId: req.params.order_id, amount: req.body.amount, reason: req.body.reason, by: 'operator' });
    return refundAnswer(out.kind === 'refunded' ? { kind: 'refund', refund: refundRecord(out.refund, out.order) } : out);
  },
});
