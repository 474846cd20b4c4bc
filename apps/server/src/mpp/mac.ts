import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Challenge ids and MACs (pure; keys derived from MASTER_KEY, nothing stored).
 *
 * - The id is `ch_` + base64url(expiry u32 BE ‖ 12 random bytes ‖ 12-byte tag), where the tag is an
 *   HMAC over expiry and randomness. A forged or truncated id, and an expired one, are refused
 *   before any database read (the verify endpoint is public and unauthenticated).
 * - The `mac` binds every term of the challenge — id, merchant, route, request_canonical, payer,
 *   chain, token, recipient, amount, pricing version, expiry — so a client cannot present a
 *   challenge for a cheaper route or another request; the stored row is checked against it too.
 * 96-bit tags: forging one takes ~2^96 online attempts against a rate-limited route.
 */
const ID_PREFIX = 'ch_';
const ID_BYTES = 4 + 12 + 12;

export interface MacKeys {
  id: Buffer;
  mac: Buffer;
}

/** Derives the two HMAC keys from the master key (domain-separated labels). */
export function deriveMacKeys(masterKey: Buffer): MacKeys {
  return {
    id: createHmac('sha256', masterKey).update('tollgate/mpp/challenge-id/v1').digest(),
    mac: createHmac('sha256', masterKey).update('tollgate/mpp/challenge-mac/v1').digest(),
  };
}

/** @example newChallengeId(keys, 1767225600) // => 'ch_aW1w…' (38 characters) */
export function newChallengeId(keys: MacKeys, expiresAtSec: number, random: Buffer = randomBytes(12)): string {
  const head = Buffer.alloc(16);
  head.writeUInt32BE(expiresAtSec, 0);
  random.copy(head, 4, 0, 12);
  const tag = createHmac('sha256', keys.id).update(head).digest().subarray(0, 12);
  return ID_PREFIX + Buffer.concat([head, tag]).toString('base64url');
}

/** The expiry (Unix s) an authentic id carries, or undefined for a forged or malformed one. */
export function checkChallengeId(keys: MacKeys, id: string): number | undefined {
  if (!id.startsWith(ID_PREFIX) || id.length !== ID_PREFIX.length + 38) return undefined;
  const raw = Buffer.from(id.slice(ID_PREFIX.length), 'base64url');
  if (raw.length !== ID_BYTES || raw.toString('base64url') !== id.slice(ID_PREFIX.length)) return undefined;
  const want = createHmac('sha256', keys.id).update(raw.subarray(0, 16)).digest().subarray(0, 12);
  if (!timingSafeEqual(want, raw.subarray(16))) return undefined;
  return raw.readUInt32BE(0);
}

export interface ChallengeTerms {
  challengeId: string;
  merchantId: string;
  routeCanonical: string;
  requestCanonical: string;
  payerAddr: string;
  chainId: number;
  tokenContract: string;
  recipient: string;
  amountWei: string;
  routePricingVersion: number;
  expiresAtSec: number;
}

/** base64url HMAC-SHA256 over the terms, one per line in a fixed order (no field contains `\n`). */
export function challengeMac(keys: MacKeys, t: ChallengeTerms): string {
  const lines = [
    'tollgate-mpp-challenge-v1',
    t.challengeId,
    t.merchantId,
    t.routeCanonical,
    t.requestCanonical,
    t.payerAddr.toLowerCase(),
    String(t.chainId),
    t.tokenContract.toLowerCase(),
    t.recipient.toLowerCase(),
    t.amountWei,
    String(t.routePricingVersion),
    String(t.expiresAtSec),
  ];
  return createHmac('sha256', keys.mac).update(lines.join('\n')).digest('base64url');
}

/** Constant-time comparison of two MAC strings. */
export function macEquals(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
