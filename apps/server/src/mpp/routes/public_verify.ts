import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { goatErrorWire } from '../goat/errors.ts';
import { EvmAddress } from '../../http/schemas.ts';
import { goatReceiptHeader } from '../goat/receipt.ts';
import { verifyError } from './outcomes.ts';
import { ReceiptSchema } from './views.ts';

export const publicMppVerify = defineRoute({
  method: 'POST',
  url: '/mpp/v1/verify',
  auth: 'public',
  summary: "Verify the payment of a challenge: 202 while pending (honour Retry-After), 200 once final with the JWS receipt in the body and GOAT's receipt in Payment-Receipt",
  tags: ['machine payments'],
  rateLimit: 'machine_payment',
  // GOAT's wire (docs/machine-payments.md): its payer client reads the code from `error`.
  errorWire: goatErrorWire,
  body: Type.Object(
    {
      challenge_id: Type.String({ minLength: 1, maxLength: 64 }),
      tx_hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }),
      payer_addr: EvmAddress,
      mac: Type.String({ minLength: 1, maxLength: 128 }),
    },
    { additionalProperties: false },
  ),
  response: {
    200: ReceiptSchema,
    202: Type.Object({ status: Type.Union([Type.Literal('pending_inclusion'), Type.Literal('pending_finality')]), challenge_id: Type.String(), tx_hash: Type.String() }),
  },
  errors: [409, 429, 503],
  async handler(req, reply, deps) {
    const b = req.body;
    const out = await deps.mpp.verifier.verify({ challengeId: b.challenge_id, txHash: b.tx_hash, payerAddr: b.payer_addr, mac: b.mac });
    reply.header('cache-control', 'no-store');
    if (out.kind === 'pending') {
      reply.status(202).header('retry-after', String(out.retryAfterSeconds));
      return { status: out.status, challenge_id: b.challenge_id, tx_hash: b.tx_hash.toLowerCase() };
    }
    if (out.kind === 'paid') {
      // GOAT's three-segment receipt (what its payer client and middleware read); the JWS stays in the body.
      reply.header('payment-receipt', await goatReceiptHeader(deps.mpp.receipts, out));
      return { status: 'paid' as const, receipt: out.jws, ...out.claims };
    }
    throw verifyError(out);
  },
});
