import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { goatErrorWire } from '../goat/errors.ts';
import { EvmAddress } from '../../http/schemas.ts';
import { issuedOrThrow } from './outcomes.ts';
import { ChallengeBodySchema } from './views.ts';

export const publicMppChallenge = defineRoute({
  method: 'POST',
  url: '/mpp/v1/challenge',
  auth: 'public',
  summary: 'Issue a machine-payment challenge (402 is the normal answer), also as WWW-Authenticate: Payment',
  tags: ['machine payments'],
  rateLimit: 'machine_payment',
  // GOAT's wire (docs/machine-payments.md): its payer client reads the code from `error`.
  errorWire: goatErrorWire,
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
    const out = issuedOrThrow(await deps.mpp.challenges.issue({ merchantId: b.merchant_id, routeCanonical: b.route_canonical, requestCanonical: b.request_canonical, payerAddr: b.payer_addr }), b.merchant_id);
    reply.status(402).header('www-authenticate', out.wwwAuthenticate).header('cache-control', 'no-store');
    return out.body;
  },
});
