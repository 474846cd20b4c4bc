import { defineRoute } from '../../http/route.ts';
import { orUnavailable, payerOf } from './outcomes.ts';
import { FacilitatorRequestSchema, VerifyResponseSchema } from '../wire.ts';

export const publicX402Verify = defineRoute({
  method: 'POST',
  url: '/x402/v2/verify',
  auth: 'public',
  summary: 'x402 v2 facilitator: verify a payment payload against payment requirements (200 with isValid, and invalidReason when false)',
  tags: ['x402'],
  rateLimit: 'machine_payment',
  rateLimitBy: { class: 'machine_payer', key: payerOf },
  body: FacilitatorRequestSchema,
  response: { 200: VerifyResponseSchema },
  errors: [429, 503],
  async handler(req, reply, deps) {
    reply.header('cache-control', 'no-store');
    return orUnavailable(() => deps.x402.verify(req.body));
  },
});
