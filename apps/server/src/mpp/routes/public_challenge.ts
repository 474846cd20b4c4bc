import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { EvmAddress } from '../../http/schemas.ts';
import { ChallengeBodySchema } from './views.ts';

export const publicMppChallenge = defineRoute({
  method: 'POST',
  url: '/mpp/v1/challenge',
  auth: 'public',
  summary: 'Issue a machine-payment challenge (402 is the normal answer), also as WWW-Authenticate: Payment',
  tags: ['machine payments'],
  rateLimit: 'machine_payment',
  body: Type.Object(
    {
      merchant_id: Type.String({ minLength: 1, maxLength: 64 }),
      route_canonical: Type.String({ minLength: 1, maxLength: 512 }),
      request_canonical: Type.String({ minLength: 1, maxLength: 512 }),
      payer_addr: EvmAddress,
    },
    { additionalProperties: false },
  ),
  response: { 402: ChallengeBodySchema },
  errors: [429],
  async handler(req, reply, deps) {
    const b = req.body;
    const out = await deps.mpp.challenges.issue({ merchantId: b.merchant_id, routeCanonical: b.route_canonical, requestCanonical: b.request_canonical, payerAddr: b.payer_addr });
    switch (out.kind) {
      case 'merchant_not_found':
        throw new AppError('merchant_not_found', `merchant ${b.merchant_id} not found`, 'merchant_id');
      case 'route_not_priced':
        throw new AppError('route_not_priced', 'the merchant has no price for this route', 'route_canonical');
      case 'invalid_request_canonical':
        throw new AppError('invalid_request', 'request_canonical must equal route_canonical or extend it with :suffix segments', 'request_canonical');
      case 'issued':
        reply.status(402).header('www-authenticate', out.wwwAuthenticate).header('cache-control', 'no-store');
        return out.body;
    }
  },
});
