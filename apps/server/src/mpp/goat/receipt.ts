import { createHash, sign, type KeyObject } from 'node:crypto';
import { kidOf, type ReceiptClaims, type ReceiptSigner } from '../receipts.ts';

/**
 * GOAT Network's machine-payment receipt ("GOAT wire"), as GOAT's payer client (`MPPClient`) and
 * its receipt middleware read it from the `Payment-Receipt` header of `POST /mpp/v1/verify`:
 *
 *   base64url(JSON(receipt)) "." base64url(signature) "." "ed25519"     (both segments unpadded)
 *
 * The receipt is a closed set of sixteen fields (the middleware refuses any other); the signature
 * is Ed25519 over SHA-256 of the signing bytes below (the middleware hashes first, then verifies
 * the 32-byte digest). Tollgate signs it with the same Ed25519 key as the JWS receipt of the same
 * payment, so the JWKS (`x`, the raw 32-byte public key) and /mpp/v1/receipt-key publish it.
 *
 * Everything here is derived from what the verify stored (claims, block, key id), and Ed25519 is
 * deterministic: repeating a verify re-creates the identical receipt without storing a second copy.
 */
export const GOAT_RECEIPT_ALG = 'ed25519';

/**
 * How long a GOAT receipt admits its holder (`receipt_expires_at` − `receipt_issued_at`). GOAT's
 * middleware serves a receipt until then, so this bounds replays of one payment; one hour, like
 * `@tollgate/mpp`'s default `maxReceiptAgeSeconds`.
 */
const GOAT_RECEIPT_TTL_SECONDS = 3600;

/** The receipt object, field for field as GOAT's middleware parses it. */
interface GoatReceipt {
  receipt_id: string;
  challenge_id: string;
  /** Tollgate creates no order for a machine payment: the challenge is the purchase (its id). */
  order_id: string;
  merchant_id: string;
  payer_addr: string;
  chain_id: number;
  token_contract: string;
  recipient: string;
  amount_wei: string;
  request_canonical: string;
  tx_hash: string;
  log_index: number;
  block_number: number;
  /** RFC 3339 UTC, whole seconds. */
  block_timestamp: string;
  receipt_issued_at: string;
  receipt_expires_at: string;
}

/** What a receipt states beyond the JWS claims: the token and the block that carried the transfer. */
export interface TransferEvidence {
  tokenContract: string;
  blockNumber: number;
  /** Unix seconds. */
  blockTimestamp: number;
}

const rfc3339 = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');

/** One receipt per challenge, so its id is a digest of the challenge id: stable across repeats. */
function goatReceiptId(challengeId: string): string {
  return `rcpt_${createHash('sha256').update(`goat-receipt:${challengeId}`).digest('base64url').slice(0, 22)}`;
}

function goatReceiptOf(claims: ReceiptClaims, evidence: TransferEvidence): GoatReceipt {
  return {
    receipt_id: goatReceiptId(claims.challenge_id),
    challenge_id: claims.challenge_id,
    order_id: claims.challenge_id,
    merchant_id: claims.merchant_id,
    payer_addr: claims.payer,
    chain_id: claims.chain_id,
    token_contract: evidence.tokenContract,
    recipient: claims.recipient,
    amount_wei: claims.amount_wei,
    request_canonical: claims.request_canonical,
    tx_hash: claims.tx_hash,
    log_index: claims.log_index,
    block_number: evidence.blockNumber,
    block_timestamp: rfc3339(evidence.blockTimestamp),
    receipt_issued_at: rfc3339(claims.issued_at),
    receipt_expires_at: rfc3339(claims.issued_at + GOAT_RECEIPT_TTL_SECONDS),
  };
}

/**
 * The signed bytes: ten strings each prefixed by its UTF-8 length (uint32 big-endian) and six
 * 64-bit big-endian integers, in GOAT's fixed order; times as Unix seconds.
 */
function goatSigningBytes(r: GoatReceipt): Buffer {
  const parts: Buffer[] = [];
  const str = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    parts.push(len, b);
  };
  const int = (n: number | bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(n));
    parts.push(b);
  };
  const secs = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  str(r.receipt_id);
  str(r.challenge_id);
  str(r.order_id);
  str(r.merchant_id);
  str(r.payer_addr);
  int(r.chain_id);
  str(r.token_contract);
  str(r.recipient);
  str(r.amount_wei);
  str(r.request_canonical);
  str(r.tx_hash);
  int(r.log_index);
  int(r.block_number);
  int(secs(r.block_timestamp));
  int(secs(r.receipt_issued_at));
  int(secs(r.receipt_expires_at));
  return Buffer.concat(parts);
}

/** The `Payment-Receipt` value: the receipt, its Ed25519 signature over SHA-256(signing bytes), the algorithm. */
function encodeGoatReceipt(r: GoatReceipt, key: KeyObject): string {
  const digest = createHash('sha256').update(goatSigningBytes(r)).digest();
  const signature = sign(null, digest, key);
  return `${Buffer.from(JSON.stringify(r)).toString('base64url')}.${signature.toString('base64url')}.${GOAT_RECEIPT_ALG}`;
}

/**
 * GOAT's receipt of a verified payment, signed with the key that signed its JWS (so a repeat after
 * a key rotation still gives the identical receipt, and both forms name one key).
 */
export async function goatReceiptHeader(signer: ReceiptSigner, paid: { claims: ReceiptClaims; jws: string; transfer: TransferEvidence }): Promise<string> {
  const kid = kidOf(paid.jws);
  const key = await signer.signingKey(kid);
  if (!key) throw new Error(`receipt key ${kid} is not held`);
  return encodeGoatReceipt(goatReceiptOf(paid.claims, paid.transfer), key);
}
