import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { RoutePriceListSchema } from './views.ts';

export const adminListRoutePrices = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/mpp/routes',
  auth: 'admin',
  summary: 'List a merchant’s machine-paid route prices (operator)',
  tags: ['admin'],
  params: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  response: { 200: RoutePriceListSchema },
  async handler(req, _reply, deps) {
    if (!(await deps.merchants.getMerchant(req.params.merchant_id))) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return { data: await deps.mpp.pricing.listPrices(req.params.merchant_id) };
  },
});
