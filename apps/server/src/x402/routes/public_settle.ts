import { defineRoute } from '../../http/route.ts';
import { orUnavailable, payerOf } from './outcomes.ts';
import { FacilitatorRequestSchema, SettleResponseSchema } from '../wire.ts';

export const publicX402Settle = defineRoute({
  method: 'POST',
  url: '/x402/v2/settle',
  auth: 'public',
  summary: 'x402 v2 facilitator: settle a payment (the executor key submits transferWithAuthorization once per authorization nonce); errorReason settlement_pending with the transaction hash when its outcome is not known yet',
  tags: ['x402'],
  rateLimit: 'machine_payment',
  rateLimitBy: { class: 'machine_payer', key: payerOf },
  body: FacilitatorRequestSchema,
  response: { 200: SettleResponseSchema },
  errors: [429, 503],
  async handler(req, reply, deps) {
    reply.header('cache-control', 'no-store');
    return orUnavailable(() => deps.x402.settle(req.body));
  },
});
