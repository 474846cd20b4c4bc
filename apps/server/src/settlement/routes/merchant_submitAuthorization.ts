import { Type } from '@sinclair/typebox';
import type { Hex } from 'viem';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderIdParams } from '../../orders/routes/getOrder.ts';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
/** uint256 as a decimal string (x402 and wallets send strings) or a JSON integer. */
const Uint = Type.Union([Type.String({ pattern: '^[0-9]{1,78}$' }), Type.Integer({ minimum: 0 })]);

/**
 * DELEGATE mode (docs/delegate.md): the payer's signed EIP-3009 `transferWithAuthorization` to the order's
 * `payToAddress`, submitted by the merchant backend; the gateway relays it (the payer pays no
 * gas). 202: the relay transaction is recorded and broadcast; the order then follows its payment
 * as for a plain transfer (PAYMENT_CONFIRMED, settlement, INVOICED).
 */
export const submitAuthorization = defineRoute({
  method: 'POST',
  url: '/api/v1/orders/:order_id/authorization',
  auth: 'merchant',
  summary: "Relay the payer's signed EIP-3009 transferWithAuthorization for an ERC20_3009 order (gasless payment)",
  tags: ['orders'],
  params: OrderIdParams,
  body: Type.Object(
    {
      from: Address,
      to: Address,
      value: Uint,
      validAfter: Uint,
      validBefore: Uint,
      nonce: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: '32-byte authorization nonce, 0x hex' }),
      signature: Type.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: '65-byte signature, 0x hex' }),
    },
    { additionalProperties: false },
  ),
  response: { 202: Type.Object({ status: Type.Literal('accepted'), order_id: Type.String(), tx_hash: Type.String() }) },
  errors: [409],
  async handler(req, reply, deps) {
    const b = req.body;
    const out = await deps.delegate.submitAuthorization(req.merchant.merchantId, req.params.order_id, {
      from: b.from as Hex,
      to: b.to as Hex,
      value: BigInt(b.value),
      validAfter: BigInt(b.validAfter),
      validBefore: BigInt(b.validBefore),
      nonce: b.nonce as Hex,
      signature: b.signature as Hex,
    });
    switch (out.kind) {
      case 'order_not_found':
        throw new AppError('order_not_found', 'order not found', 'order_id');
      case 'not_relayable':
        throw new AppError('invalid_request', 'only ERC20_3009 orders on a chain with DELEGATE settlement take an authorization', 'order_id');
      case 'not_payable':
        throw new AppError('order_not_payable', `the order is ${out.status} and no longer awaits payment`, 'order_id');
      case 'invalid':
        throw new AppError('invalid_authorization', out.message, out.param);
      case 'used':
        throw new AppError('authorization_used', out.message, 'nonce');
      case 'relayed':
        reply.status(202);
        return { status: 'accepted' as const, order_id: out.orderId, tx_hash: out.txHash };
    }
  },
});
