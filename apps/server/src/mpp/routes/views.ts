import { Type } from '@sinclair/typebox';
import { AppError } from '../../http/errors.ts';
import type { SetPriceOutcome, RoutePriceView } from '../pricing.ts';

/** Shared schemas and outcome mapping of the machine-payment routes. */
export const RoutePriceSchema = Type.Object({
  route_canonical: Type.String(),
  amount_wei: Type.String(),
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  recipient: Type.String(),
  route_pricing_version: Type.Integer(),
  updated_at: Type.String(),
});

export const RoutePriceListSchema = Type.Object({ data: Type.Array(RoutePriceSchema) });

export const SetPriceBody = Type.Object(
  {
    amount_wei: Type.String({ minLength: 1, maxLength: 78, description: 'integer price in the token smallest unit' }),
    chain_id: Type.Integer({ minimum: 1 }),
    token_symbol: Type.String({ minLength: 1, maxLength: 11 }),
  },
  { additionalProperties: false },
);

export const RouteCanonicalParams = Type.Object({ route_canonical: Type.String({ minLength: 1, maxLength: 512 }) });

/** Maps a pricing outcome to the response (or the error) for merchant and admin routes alike. */
export function priceOrThrow(out: SetPriceOutcome, merchantId: string): RoutePriceView {
  switch (out.kind) {
    case 'set':
      return out.route;
    case 'invalid_route':
      throw new AppError('invalid_request', 'route_canonical must be METHOD:segment[:segment…] (e.g. GET:api:data)', 'route_canonical');
    case 'invalid_amount':
      throw new AppError('invalid_amount', 'amount_wei must be a positive integer string (smallest unit)', 'amount_wei');
    case 'merchant_not_found':
      throw new AppError('merchant_not_found', `merchant ${merchantId} not found`, 'merchant_id');
    case 'chain_not_supported':
      throw new AppError('chain_not_supported', 'the chain is not configured', 'chain_id');
    case 'token_not_supported':
      throw new AppError('token_not_supported', 'the token is not configured on this chain', 'token_symbol');
    case 'wallet_not_found':
      throw new AppError('wallet_not_found', 'the merchant has no receiving wallet for this chain and token', 'token_symbol');
  }
}

export const ChallengeBodySchema = Type.Object({
  challenge_id: Type.String(),
  expiry: Type.Integer({ description: 'Unix seconds' }),
  amount_wei: Type.String(),
  chain_id: Type.Integer(),
  token_contract: Type.String(),
  recipient: Type.String(),
  mac: Type.String(),
  route_pricing_version: Type.Integer(),
});

export const ReceiptSchema = Type.Object({
  status: Type.Literal('paid'),
  receipt: Type.String({ description: 'compact JWS (EdDSA); verify with /.well-known/jwks.json' }),
  challenge_id: Type.String(),
  merchant_id: Type.String(),
  route_canonical: Type.String(),
  request_canonical: Type.String(),
  chain_id: Type.Integer(),
  tx_hash: Type.String(),
  log_index: Type.Integer(),
  amount_wei: Type.String(),
  payer: Type.String(),
  recipient: Type.String(),
  finality: Type.Integer(),
  issued_at: Type.Integer(),
});
