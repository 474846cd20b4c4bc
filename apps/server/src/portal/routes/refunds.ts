import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { cardsOf } from '../../rails/card/index.ts';
import { refundAnswer } from '../../refunds/routes/refundOrder.ts';
import { listOrderRefunds, requestRefund } from '../../refunds/service.ts';
import { RefundBodySchema, RefundSchema } from '../../refunds/views.ts';
import { merchantOf } from '../http.ts';

const Params = Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The refunds of an order of the session's merchant (docs/refunds.md); 404 for another merchant's order. */
export const portalListRefunds = defineRoute({
  method: 'GET',
  url: '/portal/api/orders/:order_id/refunds',
  auth: 'portal',
  summary: "The refunds of an order of the session's merchant, every rail, oldest first",
  tags: ['portal'],
  params: Params,
  response: { 200: Type.Object({ refunds: Type.Array(RefundSchema) }) },
  async handler(req, _reply, deps) {
    const refunds = await listOrderRefunds(deps.db, merchantOf(req.portal), req.params.order_id);
    if (!refunds) throw new AppError('order_not_found', 'order not found', 'order_id');
    return { refunds };
  },
});

/**
 * Owners (and the operator) refund an order from its page: the merchant API's refund, same rules
 * and codes (card through the processor, DIRECT recorded for the merchant to send, DELEGATE by
 * the executor).
 */
export const portalRefundOrder = defineRoute({
  method: 'POST',
  url: '/portal/api/orders/:order_id/refunds',
  auth: 'portal',
  portalRole: 'owner',
  summary: "Refund an order of the session's merchant (all that remains, or `amount`): card, DIRECT or DELEGATE (docs/refunds.md)",
  tags: ['portal'],
  params: Params,
  body: RefundBodySchema,
  response: { 200: RefundSchema },
  errors: [403, 409, 503],
  async handler(req, _reply, deps) {
    const out = await requestRefund({ db: deps.db, cards: cardsOf(deps), delegate: deps.delegate }, { merchantId: merchantOf(req.portal), orderId: req.params.order_id, amount: req.body.amount, reason: req.body.reason });
    return refundAnswer(out);
  },
});
