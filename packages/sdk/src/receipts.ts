// Verification of machine-payment receipts (compact JWS, EdDSA/Ed25519) against the gateway's
// published key set (`GET {base_url}/.well-known/jwks.json`). node:crypto only.
//
// A receipt proves the gateway saw a final transfer paying one challenge. Check that its claims
// are the ones you expect (merchant, route/request, amount) before serving the paid resource: a
// valid receipt for another request is still valid.
import { createPublicKey, verify } from 'node:crypto';

/** The signed claims of a receipt. */
export interface MppReceiptClaims {
  challenge_id: string;
  merchant_id: string;
  route_canonical: string;
  request_canonical: string;
  chain_id: number;
  tx_hash: string;
  log_index: number;
  amount_wei: string;
  payer: string;
  recipient: string;
  /** Confirmations the chain requires for finality (reached when the receipt was signed). */
  finality: number;
  /** Unix seconds when the gateway signed the receipt. */
  issued_at: number;
}

/** One public key of the JWKS. */
export interface MppReceiptJwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg?: string;
  use?: string;
}

export type MppReceiptVerification = { ok: true; kid: string; claims: MppReceiptClaims } | { ok: false; reason: 'malformed' | 'unsupported_algorithm' | 'not_a_receipt' | 'unknown_kid' | 'bad_signature' };

function b64json(part: string): unknown {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

/**
 * Verifies a receipt JWS against a JWKS; a forged, altered or unknown-key receipt is a value, not
 * an exception.
 *
 * @example
 * const jwks = await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json();
 * const v = verifyMppReceipt(body.receipt, jwks);
 * if (v.ok && v.claims.request_canonical === 'GET:api:data:42') serve();
 */
export function verifyMppReceipt(jws: string, jwks: { keys: readonly MppReceiptJwk[] }): MppReceiptVerification {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return { ok: false, reason: 'malformed' };
  let header: { alg?: unknown; typ?: unknown; kid?: unknown };
  let claims: MppReceiptClaims;
  try {
    header = b64json(parts[0]!) as typeof header;
    claims = b64json(parts[1]!) as MppReceiptClaims;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  // The algorithm is fixed, never taken from the token ("alg: none" and key-confusion attacks).
  if (header.alg !== 'EdDSA') return { ok: false, reason: 'unsupported_algorithm' };
  // The same key set signs other documents (the quick-pay agent manifest, typ
  // `tollgate-quickpay-manifest+jws`): only a `typ: JWT` token is a receipt, whatever its signature.
  if (header.typ !== 'JWT') return { ok: false, reason: 'not_a_receipt' };
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519') return { ok: false, reason: 'unknown_kid' };
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const good = verify(null, Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2]!, 'base64url'));
  return good ? { ok: true, kid: jwk.kid, claims } : { ok: false, reason: 'bad_signature' };
}
