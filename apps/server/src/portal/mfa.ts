// The portal's second factor: TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps, as every
// authenticator app reads an otpauth:// URI) through the `otpauth` library, and recovery codes.
//
// Set-up is two steps so a typo'd scan never locks anyone out: `setup` stores a pending secret
// and shows it (and its otpauth:// URI for a QR code); `enable` makes it the factor only when a
// code from the app matches, and returns 10 recovery codes, shown once. A code is accepted once:
// the step it belongs to is recorded (mfa-repo.ts useTotpStep), so a code read over a shoulder
// cannot sign in a second time. Secrets are encrypted at rest under MASTER_KEY, bound to the user.
import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { qrPath } from './qr.ts';
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { decryptSecret, encryptSecret } from '../merchants/secrets.ts';
import * as mrepo from './mfa-repo.ts';
import type { UserRow } from './repo.ts';

const STEP_SECONDS = 30;
const RECOVERY_CODES = 10;
const ISSUER = 'Tollgate';

/** The AAD a user's TOTP secret is bound to (ops/rotate-master-key.ts re-encrypts with it). */
export const totpAad = (userId: string) => `portal-totp:${userId}`;
const aad = totpAad;
const totp = (base32: string, label = '') => new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: STEP_SECONDS, secret: Secret.fromBase32(base32) });

/** `abcd-efgh-ijkl` (60 random bits, base32 without look-alikes); compared without case and dashes. */
function recoveryCode(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(12);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8, 12)}`;
}
const normalizeRecovery = (c: string) => c.trim().toLowerCase().replace(/[\s-]/g, '');
const hashRecovery = (c: string) =>
  createHash('sha256')
    .update(`tollgate recovery\0${normalizeRecovery(c)}`)
    .digest('hex');

/** A 6-digit code (spaces allowed, as apps show `123 456`); anything else is a recovery code. */
const asTotpCode = (c: string) => {
  const d = c.replace(/\s/g, '');
  return /^\d{6}$/.test(d) ? d : undefined;
};

export class PortalMfa {
  private readonly db: Database;
  private readonly masterKey: Buffer;
  private readonly clock: Clock;
  constructor(db: Database, masterKey: Buffer, clock: Clock) {
    this.db = db;
    this.masterKey = masterKey;
    this.clock = clock;
  }

  /** The step a code belongs to (±1 step of drift), or undefined. */
  private step(secret: string, code: string): number | undefined {
    const ts = this.clock.now();
    const delta = totp(secret).validate({ token: code, timestamp: ts, window: 1 });
    return delta === null ? undefined : Math.floor(ts / 1000 / STEP_SECONDS) + delta;
  }

  /** Starts set-up: a new pending secret (replacing any earlier pending one), shown to the user. */
  async setup(user: Pick<UserRow, 'id' | 'email'>): Promise<{ secret: string; otpauthUrl: string; qr: { size: number; path: string } }> {
    const secret = new Secret({ size: 20 }).base32;
    await mrepo.setPendingTotp(this.db, user.id, encryptSecret(this.masterKey, secret, aad(user.id)));
    const otpauthUrl = totp(secret, user.email).toString();
    return { secret, otpauthUrl, qr: qrPath(otpauthUrl) };
  }

  /** Confirms set-up with a code from the app; returns the recovery codes (shown once). */
  async enable(user: UserRow, code: string): Promise<{ kind: 'enabled'; recoveryCodes: string[] } | { kind: 'no_setup' } | { kind: 'code_invalid' }> {
    if (!user.totp_pending_ciphertext) return { kind: 'no_setup' };
    const digits = asTotpCode(code);
    const step = digits === undefined ? undefined : this.step(decryptSecret(this.masterKey, user.totp_pending_ciphertext, aad(user.id)), digits);
    if (step === undefined) return { kind: 'code_invalid' };
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    const ok = await this.db.transaction(async (tx) => {
      if (!(await mrepo.enableTotp(tx, user.id, step))) return false;
      await mrepo.replaceRecoveryCodes(tx, user.id, codes.map(hashRecovery));
      await mrepo.endEnrollment(tx, user.id);
      return true;
    });
    return ok ? { kind: 'enabled', recoveryCodes: codes } : { kind: 'no_setup' };
  }

  /**
   * Checks the second factor of a user who has one: a current TOTP code (once) or an unused
   * recovery code (then used up). The caller counts the attempt against the throttle first.
   */
  async check(q: Queryable, user: UserRow, code: string): Promise<'totp' | 'recovery' | undefined> {
    if (!user.totp_secret_ciphertext) return undefined;
    const digits = asTotpCode(code);
    if (digits) {
      const step = this.step(decryptSecret(this.masterKey, user.totp_secret_ciphertext, aad(user.id)), digits);
      return step !== undefined && (await mrepo.useTotpStep(q, user.id, step)) ? 'totp' : undefined;
    }
    if (normalizeRecovery(code).length !== 12) return undefined;
    return (await mrepo.useRecoveryCode(q, user.id, hashRecovery(code), new Date(this.clock.now()))) ? 'recovery' : undefined;
  }

  /** New recovery codes (the old ones stop working); the caller has checked a current factor. */
  async regenerate(userId: string): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    await this.db.transaction((tx) => mrepo.replaceRecoveryCodes(tx, userId, codes.map(hashRecovery)));
    return codes;
  }

  async disable(userId: string): Promise<void> {
    await this.db.transaction((tx) => mrepo.disableTotp(tx, userId));
  }

  remainingRecoveryCodes(userId: string): Promise<number> {
    return mrepo.countUnusedRecoveryCodes(this.db, userId);
  }
}
