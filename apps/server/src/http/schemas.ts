import { Type } from '@sinclair/typebox';

/** Reusable wire schemas (integers as JSON integers, amounts as decimal strings, ids with their prefix). */
export const ErrorEnvelopeSchema = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    param: Type.Optional(Type.String()),
    request_id: Type.String(),
  },
  { $id: undefined, description: 'Error envelope; `code` is from the closed catalog (see info.description)' },
);

export const EvmAddress = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EVM address (EIP-55 accepted, lowercase returned)' });
/** An address of any configured chain family; the service checks the one the chain takes. */
export const ChainAddress = Type.String({
  pattern: '^(0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$',
  description: 'EVM address (EIP-55 accepted, lowercase returned) or, on a Solana chain, a base58 public key (returned as given)',
});
export const DecimalString = Type.String({ pattern: '^\\d{1,30}(\\.\\d{1,18})?$', description: 'decimal string, e.g. "10.00"' });
export const MerchantIdString = Type.String({ pattern: '^[A-Za-z0-9_-]{3,64}$' });
