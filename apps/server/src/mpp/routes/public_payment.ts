import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { EvmAddress } from '../../http/schemas.ts';
import { parseCredential } from '../payment/credential.ts';
import { ChainUnavailable } from '../../x402/scheme.ts';
import { issuedOrThrow, paymentReceiptHeader, verifyError } from './outcomes.ts';
import { ChallengeBodySchema, ReceiptSchema } from './views.ts';

/**
 * The IETF `Payment` scheme front door, for resource servers (or Tollgate's middleware) that relay
 * a client's request: without `Authorization: Payment …` → 402 with a fresh challenge in
 * `WWW-Authenticate`; with a `hash` credential → the same verify core as /mpp/v1/verify: 200 with
 * `Payment-Receipt`, 202 with Retry-After while the transfer becomes final (on a challenge issued
 * without `payer_addr`, only with the payer's signature over it: payment/proof.ts); with an
 * `authorization` credential → settled by the gateway (mpp/authorization.ts), then the same verify
 * of the settlement transaction (202 `pending_inclusion` while it is not mined); any refusal
 * answered, as the draft asks, with a fresh challenge (402) whose body names the refusal's code.
 */
export const publicMppPayment = defineRoute({
  method: 'POST',
  url: '/mpp/v1/payment',
  auth: 'public',
  summary: 'Payment-scheme front door: 402 + WWW-Authenticate: Payment, or verify an Authorization: Payment credential',
  tags: ['machine payments'],
  rateLimit: 'machine_payment',
  body: Type.Object(
    {
      merchant_id: Type.String({ minLength: 1, maxLength: 64 }),
      route_canonical: Type.String({ minLength: 1, maxLength: 512 }),
      request_canonical: Type.String({ minLength: 1, maxLength: 512 }),
      payer_addr: Type.Optional(EvmAddress),
    },
    { additionalProperties: false },
  ),
  response: {
    200: ReceiptSchema,
    202: Type.Object({ status: Type.String(), challenge_id: Type.String(), tx_hash: Type.String() }),
    402: Type.Intersect([ChallengeBodySchema, Type.Object({ error: Type.Optional(Type.String()), code: Type.Optional(Type.String()) })]),
  },
  errors: [429, 503],
  async handler(req, reply, deps) {
    const b = req.body;
    reply.header('cache-control', 'no-store');
    const fresh = async (refusal?: AppError) => {
      const out = issuedOrThrow(await deps.mpp.challenges.issue({ merchantId: b.merchant_id, routeCanonical: b.route_canonical, requestCanonical: b.request_canonical, payerAddr: b.payer_addr }), b.merchant_id);
      reply.status(402).header('www-authenticate', out.wwwAuthenticate);
      return refusal ? { ...out.body, error: refusal.message, code: refusal.code } : out.body;
    };
    const auth = req.raw.headers.authorization;
    if (!auth) return fresh();
    const cred = parseCredential(auth);
    if (cred.kind === 'malformed') return fresh(new AppError('invalid_request', cred.reason));
    if (cred.kind === 'unsupported') return fresh(new AppError('invalid_request', `credential type ${cred.type} is not accepted; use hash or authorization`));
    const expect = { merchantId: b.merchant_id, routeCanonical: b.route_canonical, requestCanonical: b.request_canonical };
    let out;
    let txHash = '';
    if (cred.kind === 'authorization') {
      const settled = await settleOrUnavailable(() => deps.mpp.authorizations.pay({ challengeId: cred.challengeId, authorization: cred.authorization, expect }));
      if (settled.kind === 'settling') {
        // Submitted, not mined yet: 202 like a pending verify; the same credential again follows it.
        reply.status(202).header('retry-after', String(settled.retryAfterSeconds));
        return { status: 'pending_inclusion', challenge_id: cred.challengeId, tx_hash: settled.txHash ?? '' };
      }
      if (settled.kind === 'authorization_refused') {
        return fresh(new AppError(settled.used ? 'authorization_used' : 'invalid_authorization', settled.message));
      }
      out = settled;
      txHash = settled.txHash ?? '';
    } else {
      txHash = cred.txHash;
      if (!cred.payer) return fresh(new AppError('payer_mismatch', 'the credential must name its payer in source (did:pkh:eip155:<chain>:<address>)'));
      // On an open challenge the verifier demands the signature (payment/proof.ts); a bound one ignores it.
      const payerProof = cred.signature ? { kind: 'signature' as const, signature: cred.signature } : undefined;
      out = await deps.mpp.verifier.verify({ challengeId: cred.challengeId, txHash: cred.txHash, payerAddr: cred.payer, mac: undefined, expect, payerProof });
    }
    if (out.kind === 'pending') {
      reply.status(202).header('retry-after', String(out.retryAfterSeconds));
      return { status: out.status, challenge_id: cred.challengeId, tx_hash: txHash };
    }
    if (out.kind === 'paid') {
      reply.header('payment-receipt', paymentReceiptHeader(out.claims, out.jws));
      return { status: 'paid' as const, receipt: out.jws, ...out.claims };
    }
    // An outage is not the client's fault: answer 503, not a new challenge it would pay again.
    if (out.kind === 'chain_unavailable') throw verifyError(out);
    return fresh(verifyError(out));
  },
});

/** The x402 settle path reports an RPC fault as ChainUnavailable: not the client's fault, 503. */
async function settleOrUnavailable<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof ChainUnavailable) throw new AppError('service_unavailable', 'the chain could not be read; retry later');
    throw err;
  }
}
