import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clientAddress } from '../../http/client-address.ts';
import { AppError } from '../../http/errors.ts';
import { GoatCreatedSchema } from '../goat/schemas.ts';
import { goatCreatedView, openGoatSession } from '../goat/sessions.ts';

/**
 * GOAT's quick-pay session creation (goat/sessions.ts): a product (`product_key`, a fixed-price
 * link) or a custom amount (`amount_wei`) in a token named by chain and contract, for `payer_addr`.
 * 200 with `reused` and, while payable, `x402.accepts`; refusals as on the link route
 * (404 merchant_not_found / product_not_found; 410 link_*; 400 amount and token refusals; 409).
 */
export const goatCreateSession = defineRoute({
  method: 'POST',
  url: '/quickpay/v1/x402/sessions',
  auth: 'public',
  summary: 'GOAT quick-pay: open (or find again) a session for a product or a custom amount; answers x402 payment requirements',
  tags: ['quick-pay'],
  body: Type.Object(
    {
      merchant_id: Type.String({ minLength: 1, maxLength: 100, description: 'a merchant id or a payment link id' }),
      payer_addr: Type.String({ maxLength: 42, description: 'the paying wallet' }),
      chain_id: Type.Integer({ minimum: 1 }),
      token_contract: Type.String({ maxLength: 42 }),
      amount_wei: Type.Optional(Type.String({ maxLength: 80, description: 'custom amount, in the token’s smallest unit' })),
      product_key: Type.Optional(Type.String({ maxLength: 100, description: 'a product_key of the manifest' })),
      memo: Type.Optional(Type.String({ maxLength: 1000, description: 'custom amount only, at most 200 characters' })),
      idempotency_key: Type.Optional(Type.String({ maxLength: 200 })),
    },
    { additionalProperties: false },
  ),
  rateLimit: 'checkout_bind',
  response: { 200: GoatCreatedSchema },
  errors: [409, 410, 429, 503],
  async handler(req, reply, deps) {
    const out = await openGoatSession(deps, req.body, { address: clientAddress(req.raw) });
    if (out.kind === 'not_found') throw new AppError('merchant_not_found', 'no quick-pay merchant or payment link with this id', 'merchant_id');
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.header('cache-control', 'no-store');
    return goatCreatedView(out, deps.clock.now());
  },
});
