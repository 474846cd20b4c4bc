import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderStatusRecordSchema, orderStatusRecord } from '../views.ts';
import { OrderIdParams } from './getOrder.ts';

/**
 * The merchant accepts a late or under-payment recorded against its order (docs/attribution.md):
 * the order becomes INVOICED by that transfer. Idempotent: accepting the same transfer again
 * answers the same INVOICED record.
 */
export const acceptOrderPayment = defineRoute({
  method: 'POST',
  url: '/api/v1/orders/:order_id/accept-payment',
  auth: 'merchant',
  summary: 'Accept a final late or under-payment recorded against the order: the order becomes INVOICED by it',
  tags: ['orders'],
  params: OrderIdParams,
  body: Type.Object(
    {
      tx_hash: Type.Optional(Type.String({ pattern: '^(0x[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$', description: 'the recorded transfer to accept (EVM transaction hash, or Solana signature in base58); required when several are recorded' })),
      log_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'log index of the transfer, with tx_hash when one transaction holds several' })),
    },
    { additionalProperties: false, description: 'empty object (or no body) when exactly one payment can be accepted' },
  ),
  response: { 200: OrderStatusRecordSchema },
  async handler(req, _reply, deps) {
    const { merchantId } = req.merchant;
    const out = await deps.orders.acceptPayment(merchantId, req.params.order_id, { txHash: req.body?.tx_hash, logIndex: req.body?.log_index });
    switch (out.kind) {
      case 'not_found':
        throw new AppError('order_not_found', 'order not found', 'order_id');
      case 'nothing':
        throw new AppError('no_payment_to_accept', `nothing to accept: ${out.reason}`);
      case 'ambiguous':
        throw new AppError('invalid_request', `${out.count} recorded payments could be accepted; name one with tx_hash (and log_index)`, 'tx_hash');
      case 'not_final':
        throw new AppError('payment_not_final', out.level ? `the payment's transaction is not ${out.level} yet; accept it once it is` : `the payment has ${out.confirmations} of the ${out.needed} confirmations it needs to be final; accept it then`);
      case 'fee_short':
        throw new AppError('insufficient_fee_balance', 'the fee balance cannot cover the fee of this order again (it was released when the order closed); top up first');
      case 'accepted': {
        const o = await deps.orders.getOrderWithTransfers(merchantId, out.order.id);
        return orderStatusRecord(o ?? out.order, o?.observed ?? []);
      }
    }
  },
});
