/**
 * Web3 Secret Storage v3: the encrypted key file geth (`geth account new`), Foundry
 * (`cast wallet new`, `cast wallet import`) and ethers (`Wallet.encrypt`) write. The format: the key
 * is AES-128-CTR-encrypted with the first 16 bytes of a key derived from the passphrase (scrypt or
 * PBKDF2-HMAC-SHA256), and `mac` = keccak256(derived[16..32] ‖ ciphertext) proves the passphrase.
 *
 * Why hand-written on node:crypto rather than a library: viem (already here) has no keystore;
 * `ethers` would bring a second complete Ethereum library for ~100 lines; `@ethereumjs/wallet`
 * runs scrypt in JavaScript (several times slower than node:crypto's native scrypt, at 256 MB of
 * memory for geth's default parameters). node:crypto has scrypt, PBKDF2 and AES-CTR natively, and
 * viem's keccak256 (@noble/hashes) is the hash. One gap: OpenSSL enforces RFC 7914's N < 2^(16·r),
 * which geth's Go scrypt does not (the format's own scrypt test vector has r = 1, N = 2^18); such
 * files go through @noble/hashes' scrypt, the copy viem already installs. The published test vectors of the format and
 * ethers' own files are checked in test/unit/keystore-v3.test.ts.
 */
import { createCipheriv, createDecipheriv, pbkdf2Sync, randomBytes, randomUUID, scryptSync, timingSafeEqual } from 'node:crypto';
import { scrypt as jsScrypt } from '@noble/hashes/scrypt';
import { keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** A keystore that cannot be used, with a reason that never contains key material or the passphrase. */
export class KeystoreError extends Error {}

/** geth's "standard" scrypt parameters (N = 2^18, r = 8, p = 1): ~256 MB and about a second to derive. */
const STANDARD_SCRYPT = { n: 262_144, r: 8, p: 1 } as const;

/** Upper bound of the memory a file may ask scrypt for (128·N·r·p bytes): a hostile file must not exhaust the host. */
const MAX_SCRYPT_MEMORY = 1024 * 1024 * 1024;
/** Upper bound of PBKDF2 iterations (geth writes 262144; 10 M is already ~10 s). */
const MAX_PBKDF2_ROUNDS = 10_000_000;

const hex = (v: unknown, what: string, bytes?: number): Buffer => {
  if (typeof v !== 'string' || !/^(0x)?([0-9a-fA-F]{2})+$/.test(v)) throw new KeystoreError(`${what} is not hex`);
  const b = Buffer.from(v.replace(/^0x/, ''), 'hex');
  if (bytes !== undefined && b.length !== bytes) throw new KeystoreError(`${what} must be ${bytes} bytes`);
  return b;
};
const int = (v: unknown, what: string): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new KeystoreError(`${what} must be a positive integer`);
  return v;
};
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function deriveKey(passphrase: string, kdf: unknown, params: unknown): Buffer {
  if (!isObj(params)) throw new KeystoreError('crypto.kdfparams missing');
  const dklen = int(params.dklen, 'kdfparams.dklen');
  if (dklen < 32) throw new KeystoreError('kdfparams.dklen must be at least 32');
  const salt = hex(params.salt, 'kdfparams.salt');
  const pass = Buffer.from(passphrase, 'utf8');
  if (kdf === 'scrypt') {
    const n = int(params.n, 'kdfparams.n');
    const r = int(params.r, 'kdfparams.r');
    const p = int(params.p, 'kdfparams.p');
    if ((n & (n - 1)) !== 0 || n < 2) throw new KeystoreError('kdfparams.n must be a power of 2');
    const memory = 128 * n * r * p;
    if (memory > MAX_SCRYPT_MEMORY) throw new KeystoreError('scrypt parameters ask for more than 1 GiB');
    if (Math.log2(n) < 16 * r) return scryptSync(pass, salt, dklen, { N: n, r, p, maxmem: memory + 32 * 1024 * 1024 });
    return Buffer.from(jsScrypt(pass, salt, { N: n, r, p, dkLen: dklen, maxmem: memory + 32 * 1024 * 1024 }));
  }
  if (kdf === 'pbkdf2') {
    if (params.prf !== 'hmac-sha256') throw new KeystoreError('kdfparams.prf must be hmac-sha256');
    const c = int(params.c, 'kdfparams.c');
    if (c > MAX_PBKDF2_ROUNDS) throw new KeystoreError('kdfparams.c is too large');
    return pbkdf2Sync(pass, salt, c, dklen, 'sha256');
  }
  throw new KeystoreError(`unsupported kdf ${typeof kdf === 'string' ? kdf.slice(0, 20) : typeof kdf} (scrypt or pbkdf2)`);
}

const macOf = (derived: Buffer, ciphertext: Buffer): Buffer => Buffer.from(keccak256(Buffer.concat([derived.subarray(16, 32), ciphertext])).slice(2), 'hex');

/**
 * Decrypts a v3 keystore (the parsed JSON) with its passphrase: the 32-byte private key as 0x-hex,
 * and the key's checksummed address (checked against the file's `address` field when present).
 *
 * @throws KeystoreError: malformed file, unsupported KDF or cipher, wrong passphrase (MAC mismatch)
 */
export function decryptKeystore(file: unknown, passphrase: string): { privateKey: `0x${string}`; address: `0x${string}` } {
  if (!isObj(file)) throw new KeystoreError('not a JSON object');
  if (file.version !== 3) throw new KeystoreError('version must be 3 (Web3 Secret Storage v3)');
  // geth writes `crypto`; early writers (MyEtherWallet, old geth) wrote `Crypto`.
  const c = file.crypto ?? file.Crypto;
  if (!isObj(c)) throw new KeystoreError('crypto missing');
  if (c.cipher !== 'aes-128-ctr') throw new KeystoreError('cipher must be aes-128-ctr');
  const iv = hex(isObj(c.cipherparams) ? c.cipherparams.iv : undefined, 'cipherparams.iv', 16);
  const ciphertext = hex(c.ciphertext, 'ciphertext', 32);
  const mac = hex(c.mac, 'mac', 32);
  // geth and Foundry derive from the passphrase's UTF-8 bytes as typed; ethers normalizes it to
  // NFKC first. The two differ only for some non-ASCII passphrases: try the second on a mismatch.
  let derived = deriveKey(passphrase, c.kdf, c.kdfparams);
  if (!timingSafeEqual(macOf(derived, ciphertext), mac) && passphrase.normalize('NFKC') !== passphrase) derived = deriveKey(passphrase.normalize('NFKC'), c.kdf, c.kdfparams);
  if (!timingSafeEqual(macOf(derived, ciphertext), mac)) throw new KeystoreError('wrong passphrase (MAC mismatch)');
  const decipher = createDecipheriv('aes-128-ctr', derived.subarray(0, 16), iv);
  const key = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  const privateKey = `0x${key.toString('hex')}` as const;
  key.fill(0);
  let address: `0x${string}`;
  try {
    address = privateKeyToAccount(privateKey).address;
  } catch {
    throw new KeystoreError('the decrypted key is not a valid secp256k1 key');
  }
  if (typeof file.address === 'string' && file.address.replace(/^0x/, '').toLowerCase() !== address.slice(2).toLowerCase()) {
    throw new KeystoreError('the address field does not match the decrypted key');
  }
  return { privateKey, address };
}

/**
 * Encrypts a private key into a v3 keystore object (scrypt, geth's standard parameters unless
 * given), as geth writes it: lowercase `address` without 0x, a random UUID v4 `id`.
 */
export function encryptKeystore(privateKey: `0x${string}`, passphrase: string, scrypt: { n: number; r: number; p: number } = STANDARD_SCRYPT): Record<string, unknown> {
  const address = privateKeyToAccount(privateKey).address;
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const kdfparams = { dklen: 32, n: scrypt.n, r: scrypt.r, p: scrypt.p, salt: salt.toString('hex') };
  const derived = deriveKey(passphrase, 'scrypt', kdfparams);
  const cipher = createCipheriv('aes-128-ctr', derived.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([cipher.update(Buffer.from(privateKey.slice(2), 'hex')), cipher.final()]);
  return {
    address: address.slice(2).toLowerCase(),
    crypto: {
      cipher: 'aes-128-ctr',
      cipherparams: { iv: iv.toString('hex') },
      ciphertext: ciphertext.toString('hex'),
      kdf: 'scrypt',
      kdfparams,
      mac: macOf(derived, ciphertext).toString('hex'),
    },
    id: randomUUID(),
    version: 3,
  };
}
