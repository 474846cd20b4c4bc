import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { clientAddress } from '../../http/client-address.ts';
import { quickpayOf } from '../service.ts';
import { SessionSchema, sessionCreatedView } from '../views.ts';
import { LinkIdParams } from './schemas.ts';

/**
 * Opens a quick-pay session on a link (docs/quickpay.md "Sessions"): 200 with the payment terms while the
 * session is payable; 200 with its status only when an idempotency key names a session that has
 * expired or settled. A crypto session's DIRECT order is created here, for `from_address`.
 *  - 404 link_not_found; 410 link_inactive, link_expired, link_sold_out;
 *  - 400 amount_out_of_range (any-amount link), invalid_amount, rail_not_enabled, chain/token refusals;
 *  - 429 quickpay_hold_limit (this client address holds the most unpaid sessions of a limited link);
 *  - 409 idempotency_key_conflict (the key was used for another request); order refusals pass
 *    through (409 order_conflict, 400 insufficient_fee_balance).
 */
export const publicCreateQuickPaySession = defineRoute({
  method: 'POST',
  url: '/quickpay/v1/links/:link_id/sessions',
  auth: 'public',
  summary: 'Open a quick-pay session on a link (200: payment terms, or status only for an expired/settled session)',
  tags: ['quick-pay'],
  params: LinkIdParams,
  body: Type.Object(
    {
      rail: Type.Optional(Type.String({ maxLength: 16, description: 'crypto (default); card when its rail is available (fiat is accepted for card)' })),
      amount: Type.Optional(Type.String({ maxLength: 100, description: 'any-amount links: the decimal amount to pay' })),
      memo: Type.Optional(Type.String({ maxLength: 1000, description: 'the payer’s reference (at most 200 characters), shown to the merchant' })),
      idempotency_key: Type.Optional(Type.String({ maxLength: 200, description: 'the same key on the same link returns the same session (1 to 128 printable ASCII characters)' })),
      chain_id: Type.Optional(Type.Integer({ minimum: 1 })),
      token_symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 11 })),
      from_address: Type.Optional(Type.String({ maxLength: 44, description: 'crypto: the paying wallet (EVM: EIP-55 accepted; Solana: base58 public key)' })),
    },
    { additionalProperties: false },
  ),
  rateLimit: 'checkout_bind',
  response: { 200: SessionSchema },
  errors: [409, 410, 429, 503],
  async handler(req, reply, deps) {
    const out = await quickpayOf(deps).openSession(req.params.link_id, req.body, { address: clientAddress(req.raw) });
    if (out.kind === 'not_found') throw new AppError('link_not_found', 'payment link not found', 'link_id');
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.header('cache-control', 'no-store');
    return sessionCreatedView(out.view, out.status, out.rail, deps.config);
  },
});
