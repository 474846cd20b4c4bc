import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { paymentTransaction, transactionRequestLabel } from '../tx-request.ts';
import { CheckoutIdParams } from './public_getSession.ts';

/**
 * Solana Pay transaction request of a checkout session (https://docs.solanapay.com/spec): the GET
 * half names the merchant, the POST half returns the transaction of the session's bound order for
 * the asking account. The hosted page uses it to pay with a Wallet Standard wallet (its CSP lets it
 * reach no Solana RPC). Like every public checkout route, the checkout id is the capability.
 */
export const publicGetSolanaPayLabel = defineRoute({
  method: 'GET',
  url: '/checkout/v1/sessions/:checkout_id/solana-pay',
  auth: 'public',
  summary: 'Solana Pay transaction request, GET half: { label, icon }',
  tags: ['checkout'],
  params: CheckoutIdParams,
  rateLimit: 'public_read',
  response: { 200: Type.Object({ label: Type.String({ description: 'the merchant’s name' }), icon: Type.String({ description: 'absolute URL of an SVG icon' }) }) },
  errors: [429],
  async handler(req, reply, deps) {
    const label = await transactionRequestLabel(deps, req.params.checkout_id);
    if (label === undefined) throw new AppError('session_not_found', 'checkout session not found', 'checkout_id');
    reply.header('cache-control', 'no-store');
    return { label, icon: `${deps.config.publicBaseUrl.replace(/\/+$/, '')}/checkout/assets/favicon.svg` };
  },
});

export const publicPostSolanaPayTransaction = defineRoute({
  method: 'POST',
  url: '/checkout/v1/sessions/:checkout_id/solana-pay',
  auth: 'public',
  summary: 'Solana Pay transaction request, POST half: the unsigned transfer of the bound order for `account` to sign and send',
  tags: ['checkout'],
  params: CheckoutIdParams,
  body: Type.Object({ account: Type.String({ maxLength: 64, description: 'the paying wallet (base58 public key); must be the payer the session is bound to' }) }, { additionalProperties: false }),
  rateLimit: 'checkout_bind',
  response: {
    200: Type.Object({
      transaction: Type.String({
        description:
          'base64 wire transaction, unsigned: `account` is the fee payer; a transferChecked of the order amount to the merchant’s token account carrying the order’s reference key (after a create-associated-token-account-idempotent when that account does not exist)',
      }),
      message: Type.String(),
    }),
  },
  errors: [409, 410, 429, 503],
  async handler(req, reply, deps) {
    const out = await paymentTransaction(deps, req.params.checkout_id, req.body.account);
    if (out.kind === 'not_found') throw new AppError('session_not_found', 'checkout session not found', 'checkout_id');
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.header('cache-control', 'no-store');
    return { transaction: out.transaction, message: out.message };
  },
});
