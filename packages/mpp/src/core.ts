// The framework-agnostic core: one incoming request in, one decision out. It relays the client's
// `Authorization: Payment …` (if any) to Tollgate's `POST /mpp/v1/payment` and either lets the
// request through with a receipt it verified itself (Ed25519 JWS against the gateway's cached JWKS)
// or returns the response to send: the gateway's 402 + `WWW-Authenticate: Payment` challenge, or a
// 502/503 when the gateway misbehaves or cannot answer. Only node:crypto (through the SDK) and fetch.
import type { MppReceiptClaims } from '@tollgate/sdk';
import { JwksCache } from './jwks.ts';

export interface TollgateMppOptions {
  /** Base URL of the Tollgate gateway, e.g. `https://pay.example.com`. */
  gateway: string;
  merchantId: string;
  /** The priced route (`route_canonical`), e.g. `GET:api:data`. */
  route: string;
  /**
   * The concrete request a challenge is bound to (`request_canonical`): the route, or the route
   * followed by `:suffix` segments (an item id). Default: the route.
   */
  request?: (req: IncomingRequest) => string;
  /** The payer's address when the server knows its client (an account); binds challenges to it. */
  payer?: (req: IncomingRequest) => string | undefined;
  /** How long to wait for a mined transfer to become final before answering 503 + Retry-After. Default 20 s. */
  pendingWaitMs?: number;
  /**
   * Claims a paid challenge for this response; false refuses it (a client replaying the exact
   * credential of a request it was already served). Default: an in-process set kept for twice
   * `maxReceiptAgeSeconds`; pass
   * a shared store's atomic insert when several processes serve the route.
   */
  claimOnce?: (challengeId: string) => boolean | Promise<boolean>;
  /**
   * Refuse receipts signed longer ago than this (default 3600 s). Tollgate answers a repeated
   * credential with the receipt it signed the first time, so this bounds how long `claimOnce` must
   * remember a challenge. Keep it above the clock skew between you and the gateway.
   */
  maxReceiptAgeSeconds?: number;
  /** Timeout of each call to the gateway (default 10 s). */
  timeoutMs?: number;
  /** How long the receipt keys are cached. Default 10 min. */
  jwksTtlMs?: number;
  fetch?: typeof fetch;
}

export interface IncomingRequest {
  method: string;
  /** Path and query as received, e.g. `/api/data?x=1`. */
  url: string;
  authorization: string | undefined;
}

export interface VerifiedReceipt {
  claims: MppReceiptClaims;
  /** The compact JWS, for the merchant's records. */
  jws: string;
  /** The `Payment-Receipt` header value to forward to the client. */
  paymentReceipt: string;
}

export type MppDecision = { kind: 'pass'; receipt: VerifiedReceipt } | { kind: 'respond'; status: number; headers: Record<string, string>; body: string };

/** Codes of responses the middleware makes itself (the gateway's own codes pass through unchanged). */
export type MiddlewareErrorCode = 'service_unavailable' | 'payment_pending' | 'receipt_invalid' | 'gateway_error' | 'credential_already_used';

export interface MppGuard {
  check(req: IncomingRequest): Promise<MppDecision>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function respond(status: number, code: MiddlewareErrorCode, message: string, extra: Record<string, string> = {}): MppDecision {
  return { kind: 'respond', status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...extra }, body: JSON.stringify({ error: message, code }) };
}

/** The default `claimOnce`: challenge ids served in this process, forgotten after `ttlMs` (a challenge is answerable for minutes, not days). */
export function memoryClaims(ttlMs: number): (challengeId: string) => boolean {
  const seen = new Map<string, number>();
  return (id) => {
    const now = Date.now();
    // Map iteration is insertion order: drop expired entries from the front.
    for (const [k, t] of seen) {
      if (now - t < ttlMs) break;
      seen.delete(k);
    }
    if (seen.has(id)) return false;
    seen.set(id, now);
    return true;
  };
}

/** @example const guard = createMppGuard({ gateway, merchantId, route: 'GET:api:data' }); const d = await guard.check(req); */
export function createMppGuard(o: TollgateMppOptions): MppGuard {
  const gateway = o.gateway.replace(/\/+$/, '');
  const doFetch = o.fetch ?? fetch;
  const pendingWaitMs = o.pendingWaitMs ?? 20_000;
  const maxAgeSec = o.maxReceiptAgeSeconds ?? 3600;
  const claimOnce = o.claimOnce ?? memoryClaims(2 * maxAgeSec * 1000);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const timedFetch: typeof fetch = (url, init) => doFetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const jwks = new JwksCache(`${gateway}/.well-known/jwks.json`, { ttlMs: o.jwksTtlMs ?? 600_000, unknownKidMs: 30_000, fetch: timedFetch, now: Date.now });

  async function ask(body: object, authorization: string | undefined): Promise<Response | undefined> {
    try {
      return await timedFetch(`${gateway}/mpp/v1/payment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      });
    } catch {
      return undefined;
    }
  }

  /** Verifies the gateway's 200 locally: the signature, the claims this route expects, and that the forwarded header carries that receipt. */
  async function accept(r: Response, expect: { request: string; payer: string | undefined }): Promise<MppDecision> {
    const header = r.headers.get('payment-receipt');
    let outer: { receipt?: unknown; reference?: unknown; challengeId?: unknown };
    try {
      outer = JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8'));
    } catch {
      return respond(502, 'receipt_invalid', 'the gateway answered without a readable Payment-Receipt');
    }
    if (typeof outer.receipt !== 'string') return respond(502, 'receipt_invalid', 'the Payment-Receipt carries no receipt');
    let v;
    try {
      v = await jwks.verify(outer.receipt);
    } catch {
      return respond(503, 'service_unavailable', 'the gateway receipt keys could not be read; retry', { 'retry-after': '1' });
    }
    if (!v.ok) return respond(502, 'receipt_invalid', `the receipt does not verify (${v.reason})`);
    const c = v.claims;
    const mismatch =
      c.merchant_id !== o.merchantId || c.route_canonical !== o.route || c.request_canonical !== expect.request || (expect.payer !== undefined && c.payer !== expect.payer.toLowerCase()) || outer.reference !== c.tx_hash || outer.challengeId !== c.challenge_id;
    if (mismatch) return respond(502, 'receipt_invalid', 'the receipt is for another merchant, route, request or payer');
    return { kind: 'pass', receipt: { claims: c, jws: outer.receipt, paymentReceipt: header! } };
  }

  /** The gateway's 402 (a challenge, or a refusal answered with a fresh one), forwarded as written; `refusal` names the middleware's own reason. */
  async function challengeResponse(r: Response, refusal?: { code: MiddlewareErrorCode; error: string }): Promise<MppDecision> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store' };
    const www = r.headers.get('www-authenticate');
    if (www) headers['www-authenticate'] = www;
    const text = await r.text();
    if (!refusal) return { kind: 'respond', status: 402, headers, body: text };
    let challenge: object = {};
    try {
      challenge = JSON.parse(text);
    } catch {
      /* the header still carries the challenge */
    }
    return { kind: 'respond', status: 402, headers, body: JSON.stringify({ ...challenge, ...refusal }) };
  }

  async function decide(req: IncomingRequest): Promise<MppDecision> {
    const request = o.request ? o.request(req) : o.route;
    const payer = o.payer?.(req);
    const body = { merchant_id: o.merchantId, route_canonical: o.route, request_canonical: request, ...(payer ? { payer_addr: payer } : {}) };
    const deadline = Date.now() + pendingWaitMs;
    for (;;) {
      const r = await ask(body, req.authorization);
      if (!r) return respond(503, 'service_unavailable', 'the payment gateway could not be reached; retry', { 'retry-after': '1' });
      if (r.status === 200) {
        const d = await accept(r, { request, payer });
        const stale = d.kind === 'pass' && Date.now() - d.receipt.claims.issued_at * 1000 > maxAgeSec * 1000;
        if (d.kind === 'pass' && (stale || !(await claimOnce(d.receipt.claims.challenge_id)))) {
          // The gateway's verify is idempotent (a repeat returns the same receipt), so one payment
          // would otherwise buy the resource again and again: answer with a fresh challenge.
          const again = await ask(body, undefined);
          if (again?.status !== 402) return respond(503, 'service_unavailable', 'the payment gateway could not issue a challenge; retry', { 'retry-after': '1' });
          return challengeResponse(again, { code: 'credential_already_used', error: 'this credential was already used for a response; pay the new challenge' });
        }
        return d;
      }
      if (r.status === 402) return challengeResponse(r);
      const retryAfter = Math.max(1, Number(r.headers.get('retry-after')) || 1);
      if (r.status === 202) {
        // Mined but not final: wait here while it is worth it, else tell the client to retry the same credential.
        await r.body?.cancel();
        if (Date.now() + retryAfter * 1000 <= deadline) {
          await sleep(retryAfter * 1000);
          continue;
        }
        return respond(503, 'payment_pending', 'the payment is not final yet; retry the same request', { 'retry-after': String(retryAfter) });
      }
      const text = await r.text();
      if (r.status === 429 || r.status === 503) return respond(503, 'service_unavailable', 'the payment gateway is busy or cannot read the chain; retry', { 'retry-after': String(retryAfter) });
      // 400/404 here are the merchant's configuration (unknown merchant, unpriced route, bad request name).
      let code = '';
      try {
        code = String(JSON.parse(text).code ?? '');
      } catch {
        /* not JSON */
      }
      return respond(502, 'gateway_error', `the payment gateway refused the route configuration (${r.status}${code ? ` ${code}` : ''})`);
    }
  }

  return {
    async check(req) {
      try {
        return await decide(req);
      } catch {
        // A body cut off by the timeout or the network: the gateway did not answer.
        return respond(503, 'service_unavailable', 'the payment gateway did not answer in time; retry', { 'retry-after': '1' });
      }
    },
  };
}
