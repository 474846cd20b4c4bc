import type { FastifyRequest } from 'fastify';
import { NONCE_MAX_BYTES, NONCE_MIN_BYTES, TIMESTAMP_WINDOW_SECONDS, verifyRequestSignature } from '@tollgate/protocol';
import type { Clock } from '../clock.ts';
import type { NonceClaim, NonceOutcome } from '../merchants/credentials.ts';
import type { MerchantService } from '../merchants/service.ts';
import { AppError } from './errors.ts';

/** What merchant authentication reads: the clock (timestamp window) and the API keys and nonces. */
interface MerchantAuthDeps {
  clock: Clock;
  merchants: Pick<MerchantService, 'findApiKey' | 'consumeNonce'>;
}

export interface AuthedMerchant {
  merchantId: string;
  apiKey: string;
  receiveType: 'DIRECT' | 'DELEGATE';
  /** The request's nonce; already consumed (`settled`) unless the route consumes it itself. */
  nonce: NonceClaim;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Authenticates a `/api/v1` request exactly as docs/authentication.md says, cheapest and
 * non-mutating checks first; the nonce is consumed only once the signature is proven, so a forger
 * cannot burn a merchant's nonces. Throws AppError (401, or 400 for an unsignable request).
 * With `consumeNonce: false` the nonce is left to the route (see NonceClaim).
 */
export async function authenticateMerchant(req: FastifyRequest, deps: MerchantAuthDeps, consumeNonce = true): Promise<AuthedMerchant> {
  const apiKey = header(req, 'x-api-key');
  const timestamp = header(req, 'x-timestamp');
  const nonceRaw = header(req, 'x-nonce');
  const sign = header(req, 'x-sign');
  if (!apiKey) throw new AppError('api_key_invalid', 'X-API-Key header is required');
  if (!timestamp) throw new AppError('timestamp_missing', 'X-Timestamp header is required');
  if (nonceRaw === undefined) throw new AppError('nonce_missing', 'X-Nonce header is required');
  if (!sign) throw new AppError('signature_missing', 'X-Sign header is required');

  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new AppError('timestamp_out_of_window', 'X-Timestamp must be decimal Unix time in seconds');
  }
  const skew = Math.abs(Math.floor(deps.clock.now() / 1000) - Number(timestamp));
  if (skew > TIMESTAMP_WINDOW_SECONDS) {
    const hint = timestamp.length >= 13 ? ' (it looks like milliseconds; send seconds)' : '';
    throw new AppError('timestamp_out_of_window', `X-Timestamp is outside the ${TIMESTAMP_WINDOW_SECONDS} s window${hint}`);
  }
  const nonce = nonceRaw.trim();
  const nonceBytes = Buffer.byteLength(nonce, 'utf8');
  if (nonceBytes < NONCE_MIN_BYTES || nonceBytes > NONCE_MAX_BYTES) {
    throw new AppError('nonce_invalid', `X-Nonce must be ${NONCE_MIN_BYTES} to ${NONCE_MAX_BYTES} bytes after trimming`);
  }

  // Null prototype: a query parameter named __proto__ is data, not a prototype change.
  const query: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new AppError('invalid_request', `query parameter ${k} is repeated; send it once`, k);
    query[k] = v;
  }
  let body: Record<string, unknown> | undefined;
  if (req.body !== undefined && req.body !== null) {
    if (typeof req.body !== 'object' || Array.isArray(req.body)) {
      throw new AppError('invalid_request', 'request body must be a JSON object');
    }
    body = req.body as Record<string, unknown>;
  }

  const key = await deps.merchants.findApiKey(apiKey);
  if (!key) throw new AppError('api_key_invalid', 'unknown API key');
  if (key.revoked) throw new AppError('api_key_revoked', 'API key has been revoked');

  let ok: boolean;
  try {
    ok = verifyRequestSignature(key.secret, { query, body, apiKey, timestamp, nonce: nonceRaw }, sign);
  } catch (err) {
    // An unsignable body: JSON.parse turns a number literal beyond double range (`1e99999`) into
    // Infinity, which has no signed form; a field nested beyond MAX_SIGN_DEPTH has none either. A
    // client error, not a 500 (found by the route fuzzer).
    if (err instanceof TypeError) throw new AppError('invalid_request', 'request body has a value that cannot be signed (a number out of range, or nesting too deep)');
    throw err;
  }
  if (!ok) throw new AppError('invalid_signature', 'signature does not match the request');

  const claim: NonceClaim = { apiKey, nonce, settled: false };
  if (consumeNonce) await settleNonce(claim, deps);
  return { merchantId: key.merchantId, apiKey, receiveType: key.receiveType, nonce: claim };
}

/** The 401 of a nonce that could not be consumed (also answered by routes that consume their own). */
export function nonceRefusal(outcome: Exclude<NonceOutcome, 'consumed'>): AppError {
  return outcome === 'revoked' ? new AppError('api_key_revoked', 'API key has been revoked') : new AppError('replay_detected', 'Replay request detected');
}

/** Consumes a claim's nonce unless already settled; throws the 401 of a replay or revoked key. */
export async function settleNonce(claim: NonceClaim, deps: Pick<MerchantAuthDeps, 'merchants'>): Promise<void> {
  if (claim.settled) return;
  const outcome = await deps.merchants.consumeNonce(claim.apiKey, claim.nonce);
  claim.settled = true;
  if (outcome !== 'consumed') throw nonceRefusal(outcome);
}
