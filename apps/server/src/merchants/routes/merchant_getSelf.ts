import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { feeBalanceView } from '../service.ts';
import { FeeBalanceSchema, PublicMerchantSchema, publicMerchantView } from './views.ts';

/**
 * The signed merchant's own configuration plus its fee balance: lets a backend check its
 * credentials and watch its balance (like Stripe's `GET /v1/account`). An addition to
 * GOAT's route list (docs/migrating.md).
 */
export const merchantGetSelf = defineRoute({
  method: 'GET',
  url: '/api/v1/merchant',
  auth: 'merchant',
  summary: 'The authenticated merchant: configuration and fee balance',
  tags: ['merchant'],
  response: { 200: Type.Intersect([PublicMerchantSchema, Type.Object({ fee_balance: FeeBalanceSchema })]) },
  async handler(req, _reply, deps) {
    const m = await deps.merchants.getMerchant(req.merchant.merchantId);
    const balance = await deps.merchants.getFeeBalance(req.merchant.merchantId);
    if (!m || !balance) throw new AppError('merchant_not_found', 'merchant not found');
    return { ...(await publicMerchantView(deps, m)), fee_balance: feeBalanceView(balance) };
  },
});
