import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { paymentRecord } from '../proof.ts';
import { OrderIdParams } from './getOrder.ts';

export const getOrderProof = defineRoute({
  method: 'GET',
  url: '/api/v1/orders/:order_id/proof',
  auth: 'merchant',
  summary: 'Payment record of a confirmed payment; `signature` is an unsigned keccak256 hash of the record (docs/orders.md)',
  tags: ['orders'],
  params: OrderIdParams,
  response: {
    200: Type.Object({
      payload: Type.Object({
        order_id: Type.String(),
        tx_hash: Type.String(),
        log_index: Type.Integer(),
        from_addr: Type.String(),
        to_addr: Type.String(),
        amount_wei: Type.String(),
        from_chain_id: Type.Integer(),
        chain_id: Type.Integer({ description: "the same as from_chain_id, as GOAT Network's server SDKs read it (docs/migrating.md)" }),
        flow: Type.String(),
        token_contract: Type.String(),
        block_number: Type.Integer(),
        status: Type.String(),
      }),
      signature: Type.String(),
    }),
  },
  async handler(req, _reply, deps) {
    const o = await deps.orders.getOrder(req.merchant.merchantId, req.params.order_id);
    if (!o) throw new AppError('order_not_found', 'order not found', 'order_id');
    const record = paymentRecord(o);
    if (!record) throw new AppError('proof_not_available', `no confirmed payment yet (order is ${o.status})`, 'order_id');
    return record;
  },
});
