import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderIdParams } from '../../orders/routes/getOrder.ts';
import { cardsOf } from '../../rails/card/index.ts';
import { requestRefund, type RefundRequestOutcome } from '../service.ts';
import { RefundBodySchema, RefundSchema } from '../views.ts';

/**
 * Refund (part of) a paid order, any rail (docs/refunds.md): a card order through its processor; a
 * DIRECT order is recorded (`pending`) and the merchant sends the refund from the wallet that was
 * paid, which the watcher links; a FAILED DELEGATE order's pooled payment is returned by the
 * operator's executor. The refunds of an order never add up to more than was paid.
 */
export const refundOrder = defineRoute({
  method: 'POST',
  url: '/api/v1/orders/:order_id/refunds',
  auth: 'merchant',
  summary: 'Refund an order (all that remains, or `amount`): card, DIRECT or DELEGATE',
  tags: ['orders'],
  params: OrderIdParams,
  body: RefundBodySchema,
  response: { 200: RefundSchema },
  errors: [409, 503],
  async handler(req, _reply, deps) {
    const out = await requestRefund({ db: deps.db, cards: cardsOf(deps), delegate: deps.delegate }, { merchantId: req.merchant.merchantId, orderId: req.params.order_id, amount: req.body.amount, reason: req.body.reason });
    return refundAnswer(out);
  },
});

export function refundAnswer(out: RefundRequestOutcome) {
  if (out.kind === 'not_found') throw new AppError('order_not_found', 'order not found', 'order_id');
  if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
  return out.refund;
}
