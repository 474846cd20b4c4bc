import { defineRoute } from '../../http/route.ts';
import { priceOrThrow, RouteCanonicalParams, RoutePriceSchema, SetPriceBody } from './views.ts';

export const merchantSetRoutePrice = defineRoute({
  method: 'PUT',
  url: '/api/v1/mpp/routes/:route_canonical',
  auth: 'merchant',
  summary: 'Set the price of a machine-paid route (every change increments route_pricing_version)',
  tags: ['machine payments'],
  params: RouteCanonicalParams,
  body: SetPriceBody,
  response: { 200: RoutePriceSchema },
  async handler(req, _reply, deps) {
    const b = req.body;
    const out = await deps.mpp.pricing.setPrice(req.merchant.merchantId, {
      routeCanonical: req.params.route_canonical,
      amountWei: b.amount_wei,
      chainId: b.chain_id,
      tokenSymbol: b.token_symbol,
    });
    return priceOrThrow(out, req.merchant.merchantId);
  },
});
