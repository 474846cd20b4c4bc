import { defineRoute } from '../../http/route.ts';
import { RoutePriceListSchema } from './views.ts';

export const merchantListRoutePrices = defineRoute({
  method: 'GET',
  url: '/api/v1/mpp/routes',
  auth: 'merchant',
  summary: 'List the prices of the merchant’s machine-paid routes',
  tags: ['machine payments'],
  response: { 200: RoutePriceListSchema },
  async handler(req, _reply, deps) {
    return { data: await deps.mpp.pricing.listPrices(req.merchant.merchantId) };
  },
});
