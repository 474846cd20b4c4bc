import { Type } from '@sinclair/typebox';
import type { Hex } from 'viem';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { OrderIdParams } from '../../orders/routes/getOrder.ts';

/**
 * DELEGATE mode (docs/delegate.md): the payer's EIP-712 signature of the order's `calldata_sign_request`, submitted by the
 * merchant backend before (or after) the payment; settlement waits for it.
 */
export const submitCalldataSignature = defineRoute({
  method: 'POST',
  url: '/api/v1/orders/:order_id/calldata-signature',
  auth: 'merchant',
  summary: "Submit the payer's EIP-712 signature of the order's calldata_sign_request (DELEGATE)",
  tags: ['orders'],
  params: OrderIdParams,
  body: Type.Object({ signature: Type.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: '65-byte signature, 0x hex' }) }, { additionalProperties: false }),
  response: { 200: Type.Object({ status: Type.Literal('ok'), order_id: Type.String() }) },
  errors: [409],
  async handler(req, _reply, deps) {
    const out = await deps.delegate.submitSignature(req.merchant.merchantId, req.params.order_id, req.body.signature as Hex);
    switch (out.kind) {
      case 'order_not_found':
        throw new AppError('order_not_found', 'order not found', 'order_id');
      case 'no_sign_request':
        throw new AppError('invalid_request', 'this order has no calldata_sign_request', 'order_id');
      case 'expired':
        throw new AppError('calldata_signature_expired', 'the deadline of the calldata_sign_request has passed', 'signature');
      case 'invalid_signature':
        throw new AppError('invalid_calldata_signature', "the signature does not recover to the order's from_address", 'signature');
      case 'signature_exists':
        throw new AppError('calldata_signature_exists', 'a different signature was already submitted for this order', 'signature');
      case 'accepted':
        return { status: 'ok' as const, order_id: out.orderId };
    }
  },
});
