import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { priceOrThrow, RoutePriceSchema, SetPriceBody } from './views.ts';

export const adminSetRoutePrice = defineRoute({
  method: 'PUT',
  url: '/admin/v1/merchants/:merchant_id/mpp/routes/:route_canonical',
  auth: 'admin',
  summary: 'Set the price of a merchant’s machine-paid route (operator)',
  tags: ['admin'],
  params: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }), route_canonical: Type.String({ minLength: 1, maxLength: 512 }) }),
  body: SetPriceBody,
  response: { 200: RoutePriceSchema },
  async handler(req, _reply, deps) {
    const b = req.body;
    const out = await deps.mpp.pricing.setPrice(req.params.merchant_id, {
      routeCanonical: req.params.route_canonical,
      amountWei: b.amount_wei,
      chainId: b.chain_id,
      tokenSymbol: b.token_symbol,
    });
    return priceOrThrow(out, req.params.merchant_id);
  },
});
