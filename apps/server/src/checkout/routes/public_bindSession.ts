import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { checkoutOf } from '../service.ts';
import { BindResponseSchema } from '../views.ts';
import { CheckoutIdParams } from './public_getSession.ts';

/**
 * Payment initiation (docs/hosted-checkout.md): creates the session's DIRECT order for this payer and token and
 * returns its terms; the session becomes BOUND.
 *  - the same payer, chain and token again while the order is live → the same terms, no new order;
 *  - another payer or token while an order is live → 409 session_already_bound;
 *  - expired → 410 session_expired; completed, failed or cancelled, or less than a minute left
 *    → 410 session_not_payable;
 *  - the bound order expired or was cancelled while the session is still open → a new order (the
 *    session stays BOUND; audit trigger `rebind`);
 *  - the same payer's unpaid order of another checkout or quick-pay session with the same terms
 *    (the payer left it and came back) is superseded: it becomes EXPIRED, this order is created;
 *  - order refusals pass through (400 insufficient_fee_balance, 409 order_conflict when a live
 *    order no session may supersede has the same terms: the merchant's own, or one being paid, …).
 */
export const publicBindCheckoutSession = defineRoute({
  method: 'POST',
  url: '/checkout/v1/sessions/:checkout_id/bind',
  auth: 'public',
  summary: 'Start paying a session: creates (or returns) its order and payment terms',
  tags: ['checkout'],
  params: CheckoutIdParams,
  body: Type.Object(
    {
      chain_id: Type.Integer({ minimum: 1 }),
      token_symbol: Type.String({ minLength: 1, maxLength: 11 }),
      from_address: Type.String({ maxLength: 44, description: 'payer address: EVM hex (EIP-55 accepted) or a Solana base58 public key' }),
    },
    { additionalProperties: false },
  ),
  rateLimit: 'checkout_bind',
  response: { 200: BindResponseSchema },
  errors: [409, 410, 429],
  async handler(req, reply, deps) {
    const b = req.body;
    const out = await checkoutOf(deps).bindSession(req.params.checkout_id, { chainId: b.chain_id, tokenSymbol: b.token_symbol, fromAddress: b.from_address });
    if (out.kind === 'not_found') throw new AppError('session_not_found', 'checkout session not found', 'checkout_id');
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.header('cache-control', 'no-store');
    return out.terms;
  },
});
