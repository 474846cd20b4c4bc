import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { buildGoatManifest } from '../goat/manifest.ts';
import { GoatDiscoverySchema, GoatIdParams } from '../goat/schemas.ts';
import { resolveGoatTarget } from '../goat/target.ts';

export const goatGetMerchant = defineRoute({
  method: 'GET',
  url: '/quickpay/v1/merchants/:merchant_id',
  auth: 'public',
  summary: 'GOAT quick-pay discovery of a merchant or a payment link: name, whether it takes payments, where its manifest and agent document are',
  tags: ['quick-pay'],
  params: GoatIdParams,
  rateLimit: 'public_read',
  response: { 200: GoatDiscoverySchema },
  errors: [429],
  async handler(req, reply, deps) {
    const t = await resolveGoatTarget(deps, req.params.merchant_id);
    if (!t) throw new AppError('merchant_not_found', 'no quick-pay merchant or payment link with this id', 'merchant_id');
    const m = buildGoatManifest(t, deps.config.publicBaseUrl);
    const x = m.rails.x402;
    reply.header('cache-control', 'no-store');
    return {
      merchant_id: m.merchant.merchant_id,
      display_name: m.merchant.display_name,
      ...(m.merchant.logo_url ? { logo_url: m.merchant.logo_url } : {}),
      quickpay_enabled: x.enabled || m.rails.mpp.enabled,
      links: m.links,
      rails: { x402: { enabled: x.enabled, custom_amount: x.custom_amount, products: x.products.length, tokens: x.tokens.length }, mpp: { enabled: m.rails.mpp.enabled, routes: m.rails.mpp.routes.length } },
    };
  },
});
