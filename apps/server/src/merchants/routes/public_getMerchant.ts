import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdParams, PublicMerchantSchema, publicMerchantView } from './views.ts';

export const publicGetMerchant = defineRoute({
  method: 'GET',
  url: '/merchants/:merchant_id',
  auth: 'public',
  summary: 'Merchant configuration: accepted chains, tokens and receiving wallets',
  tags: ['public'],
  params: MerchantIdParams,
  // Public and unauthenticated: a hosted page reads it, and so could a scraper.
  rateLimit: 'public_read',
  response: { 200: PublicMerchantSchema },
  errors: [429],
  async handler(req, _reply, deps) {
    const m = await deps.merchants.getMerchant(req.params.merchant_id);
    if (!m) throw new AppError('merchant_not_found', 'merchant not found', 'merchant_id');
    return publicMerchantView(deps, m);
  },
});
