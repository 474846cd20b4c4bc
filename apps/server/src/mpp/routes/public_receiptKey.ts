import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { GOAT_RECEIPT_ALG } from '../goat/receipt.ts';

/**
 * The active receipt key as GOAT's receipt middleware takes it: a raw 32-byte Ed25519 public key
 * (`ed25519Public`), here hex-encoded, with the algorithm name its receipts carry. The same key is
 * the JWKS entry `kid` (its `x` is the same 32 bytes, base64url). After a rotation new receipts
 * name the new key: a middleware configured with one key must be given the new one.
 */
export const publicReceiptKey = defineRoute({
  method: 'GET',
  url: '/mpp/v1/receipt-key',
  auth: 'public',
  summary: "The active machine-payment receipt key as a raw Ed25519 public key (hex), for GOAT's receipt middleware",
  tags: ['machine payments'],
  rateLimit: 'public_read',
  response: {
    200: Type.Object({
      algorithm: Type.Literal(GOAT_RECEIPT_ALG),
      kid: Type.String({ description: 'the JWKS key id of the same key' }),
      public_key: Type.String({ pattern: '^[0-9a-f]{64}$', description: '32-byte Ed25519 public key, hex' }),
    }),
  },
  async handler(_req, reply, deps) {
    const jwk = await deps.mpp.receipts.activePublicKey();
    // Short cache: a rotation must reach a middleware that re-reads the key soon after.
    reply.header('cache-control', 'public, max-age=60');
    return { algorithm: GOAT_RECEIPT_ALG, kid: jwk.kid, public_key: Buffer.from(jwk.x, 'base64url').toString('hex') };
  },
});
