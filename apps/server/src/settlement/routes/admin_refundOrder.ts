import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';

/**
 * DELEGATE mode (docs/delegate.md): the operator returns a FAILED DELEGATE order's pooled payment to its
 * payer. 202: the refund transaction is recorded and broadcast; `refund_tx_hash` names it (also on
 * the order's status record). Repeating the call returns the same transaction.
 */
export const adminRefundOrder = defineRoute({
  method: 'POST',
  url: '/admin/v1/orders/:order_id/refund',
  auth: 'admin',
  summary: "Refund a FAILED DELEGATE order's payment from the settlement contract to its payer",
  tags: ['admin'],
  params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  body: Type.Object({}, { additionalProperties: false, description: 'empty object, or no body at all' }),
  response: { 202: Type.Object({ order_id: Type.String(), refund_tx_hash: Type.String() }) },
  errors: [409],
  async handler(req, reply, deps) {
    const out = await deps.delegate.refund(req.params.order_id);
    switch (out.kind) {
      case 'order_not_found':
        throw new AppError('order_not_found', 'order not found', 'order_id');
      case 'not_refundable':
        throw new AppError('order_not_refundable', out.reason, 'order_id');
      case 'refund':
        reply.status(202);
        return { order_id: out.orderId, refund_tx_hash: out.refundTxHash };
    }
  },
});
