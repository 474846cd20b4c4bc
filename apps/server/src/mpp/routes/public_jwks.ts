import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';

export const publicReceiptJwks = defineRoute({
  method: 'GET',
  url: '/.well-known/jwks.json',
  auth: 'public',
  summary: 'Public keys (JWKS) that verify machine-payment receipts; retired keys stay listed',
  tags: ['machine payments'],
  rateLimit: 'public_read',
  response: {
    200: Type.Object({
      keys: Type.Array(Type.Object({ kty: Type.String(), crv: Type.String(), x: Type.String(), kid: Type.String(), alg: Type.String(), use: Type.String() })),
    }),
  },
  async handler(_req, reply, deps) {
    await deps.mpp.receipts.ensureKey();
    reply.header('cache-control', 'public, max-age=300');
    return deps.mpp.receipts.jwks();
  },
});
