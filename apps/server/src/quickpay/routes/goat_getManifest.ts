import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { buildGoatManifest } from '../goat/manifest.ts';
import { GoatIdParams, GoatManifestSchema } from '../goat/schemas.ts';
import { resolveGoatTarget } from '../goat/target.ts';

export const goatGetManifest = defineRoute({
  method: 'GET',
  url: '/quickpay/:merchant_id/manifest.json',
  auth: 'public',
  summary: 'GOAT quick-pay manifest (schema goatx402.quickpay.v1) of a merchant or a payment link: tokens, products (fixed-price links), custom amount',
  tags: ['quick-pay'],
  params: GoatIdParams,
  rateLimit: 'public_read',
  response: { 200: GoatManifestSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const t = await resolveGoatTarget(deps, req.params.merchant_id);
    if (!t) throw new AppError('merchant_not_found', 'no quick-pay merchant or payment link with this id', 'merchant_id');
    reply.header('cache-control', 'no-store');
    return buildGoatManifest(t, deps.config.publicBaseUrl);
  },
});
