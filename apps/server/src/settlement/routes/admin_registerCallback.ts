import { Type } from '@sinclair/typebox';
import { isAddress } from 'viem';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { EvmAddress } from '../../http/schemas.ts';
import { MerchantIdParams } from '../../merchants/routes/views.ts';

const NullableAddress = Type.Union([Type.String(), Type.Null()]);

export const CallbackSchema = Type.Object({
  callback_id: Type.String(),
  merchant_id: Type.String(),
  chain_id: Type.Integer(),
  callback_contract: Type.String(),
  eip712_name: Type.String(),
  eip712_version: Type.String(),
  /** where payers' funds sit before settlement (the chain's settlement contract) */
  spent_address: NullableAddress,
  /** the only caller of the adapter's onPaymentCallback: adapters allowlist it */
  core_address: NullableAddress,
  created_at: Type.String(),
});

/**
 * DELEGATE mode (docs/delegate.md): registers a DELEGATE merchant's callback adapter on a chain, after reading
 * it there (code, EIP-5267 domain: settlement/adapter-check.ts; 400 adapter_* otherwise); a second
 * registration on the same chain replaces the first for new orders (orders already created keep
 * the one their signing request names).
 */
export const adminRegisterCallback = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/callbacks',
  auth: 'admin',
  summary: "Register (or replace) a DELEGATE merchant's callback contract on a chain",
  tags: ['admin'],
  params: MerchantIdParams,
  body: Type.Object(
    {
      chain_id: Type.Integer({ minimum: 1 }),
      callback_contract: EvmAddress,
      eip712_name: Type.String({ minLength: 1, maxLength: 64 }),
      eip712_version: Type.String({ minLength: 1, maxLength: 32 }),
    },
    { additionalProperties: false },
  ),
  response: { 201: CallbackSchema },
  async handler(req, reply, deps) {
    const b = req.body;
    if (!isAddress(b.callback_contract) || /^0x0{40}$/i.test(b.callback_contract)) {
      throw new AppError('invalid_request', 'callback_contract must be a non-zero address with a valid EIP-55 checksum (or all lowercase)', 'callback_contract');
    }
    const out = await deps.delegate.registerCallback(req.params.merchant_id, {
      chainId: b.chain_id,
      callbackContract: b.callback_contract,
      eip712Name: b.eip712_name,
      eip712Version: b.eip712_version,
    });
    switch (out.kind) {
      case 'merchant_not_found':
        throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
      case 'not_delegate':
        throw new AppError('invalid_request', 'callbacks are for DELEGATE merchants; this merchant receives DIRECT', 'merchant_id');
      case 'chain_not_supported':
        throw new AppError('chain_not_supported', `chain ${b.chain_id} is not configured`, 'chain_id');
      case 'delegate_not_enabled':
        throw new AppError('delegate_not_enabled', `DELEGATE settlement is not set up on chain ${b.chain_id}`, 'chain_id');
      case 'adapter_invalid': {
        const p = out.problem;
        // The chain did not answer: nothing is known about the adapter, so nothing is registered.
        if (p.code === 'unreachable') throw new AppError('service_unavailable', p.message, 'chain_id');
        const param = p.code === 'adapter_domain_mismatch' && (p.field === 'eip712_name' || p.field === 'eip712_version') ? p.field : 'callback_contract';
        throw new AppError(p.code, p.message, param);
      }
      case 'registered':
        reply.status(201);
        return out.callback;
    }
  },
});
