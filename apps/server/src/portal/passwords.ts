// Password hashing of portal users: scrypt from node:crypto (memory-hard, no native dependency).
//
// Parameters: N = 2^15, r = 8, p = 1, 32-byte key, 16-byte random salt. scrypt's memory is
// 128 · N · r bytes = 32 MiB per hash, the figure OWASP's password storage cheat sheet gives for
// scrypt (N=2^15, r=8, p=1 as its first option); one hash takes ~60-100 ms on one core of the 2-core
// reference machine, so a stolen hash costs a GPU attacker memory bandwidth per guess, and a sign-in
// costs the server about as much as one TLS handshake. The parameters are stored with the hash
// (`scrypt$<log2 N>$<r>$<p>$<salt>$<key>`, base64url), so raising them later re-hashes nothing:
// old hashes verify with their own parameters.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;

function scrypt(password: string, salt: Buffer, keyLen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFKC'), salt, keyLen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

// Node refuses scrypt above `maxmem` (32 MiB by default, which 128·N·r exactly reaches): twice the need.
const opts = (logN: number, r: number, p: number): ScryptOptions => ({ N: 2 ** logN, r, p, maxmem: 2 * 128 * 2 ** logN * r + 1024 * 1024 });

/** @example await hashPassword('correct horse battery staple') // => 'scrypt$15$8$1$…$…' */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, opts(LOG_N, R, P));
  return `scrypt$${LOG_N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time check of `password` against a stored hash; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (!(logN >= 10 && logN <= 20 && r >= 1 && r <= 32 && p >= 1 && p <= 4)) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const want = Buffer.from(parts[5]!, 'base64url');
  if (want.length < 16) return false;
  const got = await scrypt(password, salt, want.length, opts(logN, r, p));
  return timingSafeEqual(got, want);
}

/**
 * A hash of a random password, verified when the email is unknown, so an unknown email costs the
 * same time as a wrong password (no account enumeration by timing).
 */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  return (dummy ??= hashPassword(randomBytes(16).toString('hex')));
}

/** Passwords are 12 to 256 characters (NIST SP 800-63B: length, no composition rules). */
const PASSWORD_MIN = 12;
const PASSWORD_MAX = 256;

/**
 * Why a new password is refused, or undefined when it is acceptable: 12 to 256 characters, and not
 * only whitespace (twelve spaces pass a length rule and are the first thing a guesser tries).
 * Checked by every path that sets a password, whatever schema the route has.
 */
export function passwordProblem(password: string): string | undefined {
  const n = [...password].length;
  if (n < PASSWORD_MIN || n > PASSWORD_MAX) return `a password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;
  // Whitespace, and the invisible format and control characters (U+200B, U+FEFF…), are not enough.
  if (!/[^\s\p{Cf}\p{Cc}]/u.test(password)) return 'a password cannot be only spaces or invisible characters';
  return undefined;
}
