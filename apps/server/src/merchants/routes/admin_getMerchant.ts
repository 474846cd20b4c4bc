import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { feeBalanceView } from '../service.ts';
import { FeeBalanceSchema, MerchantIdParams, WalletSchema } from './views.ts';

export const adminGetMerchant = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id',
  auth: 'admin',
  summary: 'Show a merchant with wallets, API keys (never secrets) and fee balance',
  tags: ['admin'],
  params: MerchantIdParams,
  response: {
    200: Type.Object({
      merchant_id: Type.String(),
      name: Type.String(),
      receive_type: Type.String(),
      logo_url: Type.Union([Type.String(), Type.Null()]),
      return_urls: Type.Array(Type.String()),
      card_enabled: Type.Boolean(),
      underpay_tolerance_bps: Type.Integer({ description: 'under-payment tolerance in basis points of the order amount (docs/attribution.md)' }),
      created_at: Type.String(),
      wallets: Type.Array(WalletSchema),
      api_keys: Type.Array(Type.Object({ api_key: Type.String(), created_at: Type.String(), revoked_at: Type.Union([Type.String(), Type.Null()]) })),
      fee_balance: FeeBalanceSchema,
    }),
  },
  async handler(req, _reply, deps) {
    const id = req.params.merchant_id;
    const m = await deps.merchants.getMerchant(id);
    const balance = await deps.merchants.getFeeBalance(id);
    if (!m || !balance) throw new AppError('merchant_not_found', `merchant ${id} not found`, 'merchant_id');
    return {
      merchant_id: m.id,
      name: m.name,
      receive_type: m.receive_type,
      logo_url: m.logo_url,
      return_urls: m.return_urls,
      card_enabled: m.card_enabled,
      underpay_tolerance_bps: m.underpay_tolerance_bps,
      created_at: m.created_at.toISOString(),
      wallets: await deps.merchants.listWallets(id),
      api_keys: await deps.merchants.listApiKeys(id),
      fee_balance: feeBalanceView(balance),
    };
  },
});
