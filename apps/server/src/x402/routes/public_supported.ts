import { defineRoute } from '../../http/route.ts';
import { SupportedResponseSchema } from '../wire.ts';

export const publicX402Supported = defineRoute({
  method: 'GET',
  url: '/x402/v2/supported',
  auth: 'public',
  summary: 'x402 v2 facilitator: payment kinds this gateway verifies and settles (scheme exact, eip155 networks with EIP-3009 tokens) and its settlement signer',
  tags: ['x402'],
  rateLimit: 'machine_payment',
  response: { 200: SupportedResponseSchema },
  async handler(_req, reply, deps) {
    reply.header('cache-control', 'no-store');
    return deps.x402.supported();
  },
});
