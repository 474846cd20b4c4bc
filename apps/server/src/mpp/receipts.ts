import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Database, Queryable } from '../db/database.ts';
import { decryptSecret, encryptSecret } from '../merchants/secrets.ts';
import * as repo from './repo.ts';

/**
 * Signed machine-payment receipts: compact JWS, `alg: EdDSA` (Ed25519), `kid` naming the key.
 *
 * Keys are generated here, the private half stored AES-256-GCM encrypted under MASTER_KEY (the
 * same format as API secrets, bound to the kid), and published as a JWKS. Rotation inserts a new
 * active key and retires the old one, which stays in the JWKS so receipts it signed still verify.
 * node:crypto only: Ed25519 signing is one call, and no dependency is worth that.
 *
 * Each process caches the active key for KEY_CACHE_MS: after a rotation elsewhere a process may
 * sign with the retired key for up to that long — still valid, since retired keys stay published.
 */
const KEY_CACHE_MS = 60_000;

export interface ReceiptClaims {
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
  /** Confirmations the chain requires for finality, reached when the receipt was signed. */
  finality: number;
  issued_at: number;
}

export interface Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** The AAD that binds a receipt key's ciphertext to its kid (also used by ops/rotate-master-key.ts). */
export const receiptKeyAad = (kid: string) => `mpp-receipt-key:${kid}`;
const aadOf = receiptKeyAad;

function newKey(masterKey: Buffer): { kid: string; privateCiphertext: string; publicJwk: Jwk } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
  // The kid is a thumbprint-like digest of the public key: stable, unique, reveals nothing.
  const kid = `rk_${createHash('sha256').update(x).digest('base64url').slice(0, 16)}`;
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
  return { kid, privateCiphertext: encryptSecret(masterKey, pkcs8, aadOf(kid)), publicJwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' } };
}

export class ReceiptSigner {
  private cached: { kid: string; key: KeyObject; at: number } | undefined;
  /** Keys by kid, for other encodings of a receipt already signed (a key never changes under its kid). */
  private readonly byKid = new Map<string, KeyObject>();
  private readonly db: Database;
  private readonly masterKey: Buffer;

  constructor(db: Database, masterKey: Buffer) {
    this.db = db;
    this.masterKey = masterKey;
  }

  /** Creates the first key when there is none (idempotent across processes). */
  async ensureKey(q: Queryable = this.db): Promise<void> {
    const keys = await repo.listReceiptKeys(q);
    if (keys.some((k) => k.retired_at === null)) return;
    await repo.insertFirstReceiptKey(q, newKey(this.masterKey));
  }

  /**
   * Signs another document of this gateway (quick-pay agent manifests) with the active key, as a
   * compact JWS whose `typ` says what it is: the JWKS stays one published key set, and a receipt
   * verifier (typ JWT, receipt claims) never mistakes such a document for a receipt.
   */
  async signDocument(payload: object, typ: string): Promise<string> {
    await this.activeSigner();
    const { kid, key } = this.cached!;
    return compactJws({ alg: 'EdDSA', typ, kid }, payload, key);
  }

  /**
   * The private key of `kid` (active or retired), for another encoding of a receipt this key
   * signed as a JWS (mpp/goat: GOAT's receipt format). Undefined for a kid this gateway never had.
   */
  async signingKey(kid: string): Promise<KeyObject | undefined> {
    if (this.cached?.kid === kid) return this.cached.key;
    let key = this.byKid.get(kid);
    if (!key) {
      const row = (await repo.listReceiptKeys(this.db)).find((k) => k.kid === kid);
      if (!row) return undefined;
      key = privateKeyOf(this.masterKey, row);
      this.byKid.set(kid, key);
    }
    return key;
  }

  /** The active key's id and public half (the JWKS entry that signs new receipts). */
  async activePublicKey(): Promise<Jwk> {
    await this.ensureKey();
    const row = (await repo.listReceiptKeys(this.db)).find((k) => k.retired_at === null);
    if (!row) throw new Error('no active receipt key');
    return row.public_jwk as unknown as Jwk;
  }

  /** Retires the active key and makes a new one; returns the new kid. */
  async rotate(): Promise<string> {
    const k = newKey(this.masterKey);
    await this.db.transaction((tx) => repo.rotateReceiptKey(tx, k));
    this.cached = undefined;
    return k.kid;
  }

  /** The published key set: every key, active first. */
  async jwks(): Promise<{ keys: Jwk[] }> {
    const keys = await repo.listReceiptKeys(this.db);
    return { keys: keys.sort((a, b) => Number(a.retired_at !== null) - Number(b.retired_at !== null)).map((k) => k.public_jwk as unknown as Jwk) };
  }

  /**
   * The active key, ready to sign synchronously: callers load it before opening the transaction
   * that stores the receipt (PGlite runs one transaction at a time; a read on another connection
   * from inside it would wait for itself).
   */
  async activeSigner(): Promise<(claims: ReceiptClaims) => string> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at >= KEY_CACHE_MS) {
      await this.ensureKey();
      const row = (await repo.listReceiptKeys(this.db)).find((k) => k.retired_at === null);
      if (!row) throw new Error('no active receipt key');
      this.cached = { kid: row.kid, key: privateKeyOf(this.masterKey, row), at: now };
    }
    const { kid, key } = this.cached;
    return (claims) => signReceipt(claims, kid, key);
  }
}

function privateKeyOf(masterKey: Buffer, row: repo.ReceiptKeyRow): KeyObject {
  const der = Buffer.from(decryptSecret(masterKey, row.private_ciphertext, aadOf(row.kid)), 'base64');
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** A compact JWS (EdDSA) over the claims. */
function compactJws(header: object, payload: object, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

function signReceipt(claims: ReceiptClaims, kid: string, key: KeyObject): string {
  const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const input = `${header}.${payload}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

/** The key id in the header of a receipt this gateway signed. */
export function kidOf(jws: string): string {
  return (JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string }).kid;
}

/** The claims of a receipt this gateway signed (stored, so not re-verified here). */
export function decodeClaims(jws: string): ReceiptClaims {
  return JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as ReceiptClaims;
}
