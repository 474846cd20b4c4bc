import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { proofHash, type ProofPayload } from '../proof.ts';
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
    const confirmed = o.status === 'PAYMENT_CONFIRMED' || o.status === 'INVOICED';
    if (!confirmed || !o.tx_hash || o.log_index === null || o.block_number === null || !o.paid_amount_wei) {
      throw new AppError('proof_not_available', `no confirmed payment yet (order is ${o.status})`, 'order_id');
    }
    const payload: ProofPayload = {
      order_id: o.id,
      tx_hash: o.tx_hash,
      log_index: o.log_index,
      from_addr: o.from_address,
      to_addr: o.pay_to_address,
      // the amount actually transferred (≥ amount_wei), as the on-chain log says
      amount_wei: o.paid_amount_wei,
      from_chain_id: o.chain_id,
      token_contract: o.token_contract,
      block_number: Number(o.block_number),
      status: o.status,
    };
    return { payload, signature: proofHash(payload) };
  },
});
