import { defineRoute } from '../../../http/route.ts';
import { AppError } from '../../../http/errors.ts';
import { OrderIdParams } from '../../../orders/routes/getOrder.ts';
import { cardsOf } from '../index.ts';
import type { RefundOutcome } from '../service.ts';
import { CardRefundSchema, RefundBodySchema, refundView } from '../views.ts';

/**
 * Refund (part of) a paid card order through its processor. Crypto orders are refunded on chain by
 * the merchant (400 card_order_not_refundable). A refund of an order not yet INVOICED holds it until
 * the refund settles; a full refund then fails it. An INVOICED order stays INVOICED.
 */
export const refundCardOrder = defineRoute({
  method: 'POST',
  url: '/api/v1/orders/:order_id/refunds',
  auth: 'merchant',
  summary: 'Refund a card order (all that remains, or `amount`) through the card processor',
  tags: ['orders'],
  params: OrderIdParams,
  body: RefundBodySchema,
  response: { 200: CardRefundSchema },
  errors: [503],
  async handler(req, _reply, deps) {
    const out = await cardsOf(deps).refund({ merchantId: req.merchant.merchantId, orderId: req.params.order_id, amount: req.body.amount, reason: req.body.reason, by: 'merchant' });
    return refundAnswer(out);
  },
});

export function refundAnswer(out: RefundOutcome) {
  if (out.kind === 'not_found') throw new AppError('order_not_found', 'order not found', 'order_id');
  if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
  return refundView(out.refund, out.order);
}
