// Portal accounts: sign-in (users and the operator), sessions, invitations, throttling. Returns
// typed outcomes; the portal routes map them to HTTP and set the cookie.
//
// Sessions: a random 256-bit id in the cookie, its SHA-256 in portal_sessions. Signing in always
// creates a new id and deletes the one the browser presented, so an id planted before sign-in
// (session fixation) never becomes authenticated. Each session has its own random CSRF token
// (synchronizer token): unsafe requests must echo it in X-CSRF-Token (portal/http.ts).
//
// Throttling: attempts are counted per account ('acct:<email>') and per client address
// ('ip:<addr>') in a 15-minute window, atomically and BEFORE the password is hashed (repo.ts
// countAttempt), so concurrent guesses cannot all slip under the limit. 5 failures lock an account,
// 30 an address, until the window ends: an online guesser gets 5 tries per account per 15 min
// (~480 a day), and one address cannot spray many accounts. A success clears the account's count
// and takes its attempt back from the address's. Every route that hashes a password counts this
// way (sign-in, invitation accept, password change), and its hashing goes through the process's
// HashGate (hashgate.ts), which refuses rather than queues without bound.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { getMerchant } from '../merchants/repo.ts';
import { BUSY, HashGate, type HashGateOptions } from './hashgate.ts';
import { PortalMfa } from './mfa.ts';
import { merchantRequiresTotp } from './mfa-repo.ts';
import { dummyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import * as repo from './repo.ts';

export const SESSION_TTL_SECONDS = 8 * 3600;
const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
const THROTTLE_WINDOW_SECONDS = 15 * 60;
export const MAX_ACCOUNT_FAILURES = 5;
export const MAX_ADDRESS_FAILURES = 30;

/** Rank of each role: a route needing `developer` admits developer, owner and operator. */
export const ROLE_RANK: Readonly<Record<repo.SessionRole, number>> = { viewer: 1, developer: 2, owner: 3, operator: 4 };

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const token = () => randomBytes(32).toString('base64url');
export const normalizeEmail = (e: string) => e.trim().toLowerCase();

export interface NewSession {
  /** the cookie value (never stored) */
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * `busy`: the process is hashing as much as it allows (HashGate); retry in a second.
 * `totp_required`: the password is right and the user has a second factor: send it too (`totp`).
 */
export type LoginOutcome = { kind: 'ok'; session: NewSession } | { kind: 'failed' } | { kind: 'totp_required' } | { kind: 'throttled'; retryAfterSeconds: number } | { kind: 'busy' };

/** A new password that breaks the rules (passwords.ts), with the reason. */
export type PasswordRefused = { kind: 'password_invalid'; reason: string };

export class PortalAuth {
  /** Bounds the password hashing of this process (shared by every route that hashes). */
  readonly gate: HashGate;
  readonly mfa: PortalMfa;
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;

  constructor(db: Database, config: Config, clock: Clock, gate: HashGateOptions = {}) {
    this.db = db;
    this.config = config;
    this.clock = clock;
    this.gate = new HashGate(gate);
    this.mfa = new PortalMfa(db, config.masterKey, clock);
  }

  private now() {
    return new Date(this.clock.now());
  }

  /**
   * The fingerprint operator sessions carry: HMAC-SHA256 of ADMIN_TOKEN under MASTER_KEY, so the
   * database holds nothing a reader could test token guesses against. null when operator sign-in
   * is off (then no operator session is valid).
   */
  operatorKeyFingerprint(): string | null {
    const t = this.config.adminToken;
    return t ? createHmac('sha256', this.config.masterKey).update(`tollgate portal operator session\0${t}`).digest('hex') : null;
  }

  private async openSession(q: Pick<Database, 'query'>, s: { userId: string | null; merchantId: string | null; role: repo.SessionRole; replacing?: string | undefined; totpEnrollment?: boolean }): Promise<NewSession> {
    const now = this.now();
    const sessionId = token();
    const csrfToken = token();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_SECONDS * 1000);
    if (s.replacing) await repo.deleteSession(q as Database, sha256(s.replacing));
    const operatorKeyFp = s.role === 'operator' ? (this.operatorKeyFingerprint() ?? undefined) : undefined;
    await repo.insertSession(q as Database, { idHash: sha256(sessionId), userId: s.userId, merchantId: s.merchantId, role: s.role, csrfToken, now, expiresAt, operatorKeyFp, totpEnrollment: s.totpEnrollment });
    return { sessionId, csrfToken, expiresAt };
  }

  /**
   * Counts this attempt against `keys` (one statement, before any hashing); returns the seconds
   * until they may try again when a limit is passed, else 0.
   */
  async attempt(keys: string[]): Promise<number> {
    const now = this.now();
    const counts = await repo.countAttempt(this.db, keys, now, THROTTLE_WINDOW_SECONDS);
    let wait = 0;
    for (const [key, c] of counts) {
      const max = key.startsWith('ip:') ? MAX_ADDRESS_FAILURES : MAX_ACCOUNT_FAILURES;
      if (c.failures > max) wait = Math.max(wait, Math.ceil((c.windowStart.getTime() + THROTTLE_WINDOW_SECONDS * 1000 - now.getTime()) / 1000), 1);
    }
    return wait;
  }

  /**
   * Email + password (+ second factor, when the user has one) sign-in. `presented` is the session
   * cookie the browser sent, if any (deleted). A wrong code counts like a wrong password; a right
   * password without a code answers `totp_required` and does not count (the sign-in form's first
   * step). A user of a merchant that requires a factor and has none gets an enrollment session.
   */
  async login(input: { email: string; password: string; totp?: string | undefined; ip: string; presented?: string | undefined }): Promise<LoginOutcome> {
    const email = normalizeEmail(input.email);
    const keys = { acct: `acct:${email}`, ip: `ip:${input.ip}` };
    const ticket = this.gate.ticket(input.ip);
    if (this.gate.refuses(ticket)) return { kind: 'busy' };
    const wait = await this.attempt([keys.acct, keys.ip]);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const user = await repo.findUserByEmail(this.db, email);
    // Always one scrypt, whether the user exists or not: same time for both answers.
    const ok = await this.gate.run(ticket, async () => verifyPassword(input.password, user?.password_hash ?? (await dummyHash())));
    if (ok === BUSY) {
      // Nothing was checked: the attempt does not count against the account or the address.
      await repo.uncountAttempt(this.db, [keys.acct, keys.ip]);
      return { kind: 'busy' };
    }
    if (!user || !ok || user.disabled_at) return { kind: 'failed' };
    if (user.totp_secret_ciphertext && !input.totp) {
      await repo.uncountAttempt(this.db, [keys.acct, keys.ip]);
      return { kind: 'totp_required' };
    }
    const enroll = !user.totp_secret_ciphertext && (await merchantRequiresTotp(this.db, user.merchant_id));
    return this.db.transaction(async (tx) => {
      if (user.totp_secret_ciphertext && !(await this.mfa.check(tx, user, input.totp!))) return { kind: 'failed' } as const;
      await repo.clearLoginFailures(tx, keys.acct);
      await repo.uncountAttempt(tx, [keys.ip]);
      return { kind: 'ok', session: await this.openSession(tx, { userId: user.id, merchantId: user.merchant_id, role: user.role, replacing: input.presented, totpEnrollment: enroll }) } as const;
    });
  }

  /** The operator signs in with the admin token (ADMIN_TOKEN); throttled per address like users. */
  async operatorLogin(input: { adminToken: string; ip: string; presented?: string | undefined }): Promise<LoginOutcome | { kind: 'disabled' }> {
    if (!this.config.adminToken) return { kind: 'disabled' };
    // Per address only: an account lock on the one operator credential would let anyone lock the
    // operator out with five wrong guesses.
    const keys = { ip: `ip:${input.ip}` };
    const wait = await this.attempt([keys.ip]);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const ok = timingSafeEqual(Buffer.from(sha256(input.adminToken)), Buffer.from(sha256(this.config.adminToken)));
    if (!ok) return { kind: 'failed' };
    await repo.uncountAttempt(this.db, [keys.ip]);
    return { kind: 'ok', session: await this.openSession(this.db, { userId: null, merchantId: null, role: 'operator', replacing: input.presented }) };
  }

  async session(sessionId: string): Promise<repo.SessionRow | undefined> {
    return repo.findSession(this.db, sha256(sessionId), this.now(), this.operatorKeyFingerprint());
  }

  /**
   * Signs out everywhere: a user's every session, or (the operator) every operator session. The
   * current one ends too; the caller clears its cookie. Returns how many sessions ended.
   */
  async logoutEverywhere(s: { userId: string | null; role: repo.SessionRole }): Promise<number> {
    return s.role === 'operator' ? repo.deleteOperatorSessions(this.db) : repo.deleteUserSessions(this.db, s.userId!);
  }

  /**
   * A signed-in user changes its password: the current one is required (counted like a sign-in
   * attempt, per account and address, before hashing), and every other session of the user ends,
   * so a session an attacker holds does not outlive the change.
   */
  async changePassword(input: {
    userId: string;
    sessionId: string;
    current: string;
    next: string;
    ip: string;
  }): Promise<{ kind: 'changed'; endedSessions: number } | { kind: 'wrong_password' } | { kind: 'throttled'; retryAfterSeconds: number } | { kind: 'busy' } | PasswordRefused> {
    const problem = passwordProblem(input.next);
    if (problem) return { kind: 'password_invalid', reason: problem };
    const user = await repo.findUserById(this.db, input.userId);
    if (!user || user.disabled_at) return { kind: 'wrong_password' };
    const keys = [`acct:${user.email}`, `ip:${input.ip}`];
    const ticket = this.gate.ticket(input.ip);
    if (this.gate.refuses(ticket)) return { kind: 'busy' };
    const wait = await this.attempt(keys);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const hashed = await this.gate.run(ticket, async () => ((await verifyPassword(input.current, user.password_hash)) ? hashPassword(input.next) : undefined));
    if (hashed === BUSY) {
      await repo.uncountAttempt(this.db, keys);
      return { kind: 'busy' };
    }
    if (hashed === undefined) return { kind: 'wrong_password' };
    return this.db.transaction(async (tx) => {
      if (!(await repo.setPasswordHashById(tx, user.id, hashed))) return { kind: 'wrong_password' } as const;
      await repo.clearLoginFailures(tx, keys[0]!);
      await repo.uncountAttempt(tx, [keys[1]!]);
      return { kind: 'changed', endedSessions: await repo.deleteUserSessions(tx, user.id, sha256(input.sessionId)) } as const;
    });
  }

  async logout(sessionId: string): Promise<void> {
    await repo.deleteSession(this.db, sha256(sessionId));
  }

  /** Deletes expired sessions and finished throttling windows (a worker runs it every 10 minutes). */
  async pruneExpired(): Promise<number> {
    const now = this.now();
    return (await repo.pruneSessions(this.db, now)) + (await repo.pruneLoginFailures(this.db, new Date(now.getTime() - THROTTLE_WINDOW_SECONDS * 1000)));
  }

  /** Creates a user directly (CLI `tollgate portal user add`, the dev profile). */
  async createUser(input: { merchantId: string; email: string; password: string; role: repo.UserRole }): Promise<{ kind: 'created'; userId: string } | { kind: 'merchant_not_found' } | { kind: 'exists' } | PasswordRefused> {
    const problem = passwordProblem(input.password);
    if (problem) return { kind: 'password_invalid', reason: problem };
    const passwordHash = await hashPassword(input.password);
    return this.db.transaction(async (tx) => {
      if (!(await getMerchant(tx, input.merchantId))) return { kind: 'merchant_not_found' } as const;
      const userId = `usr_${randomBytes(12).toString('hex')}`;
      const ok = await repo.insertUser(tx, { id: userId, merchantId: input.merchantId, email: normalizeEmail(input.email), passwordHash, role: input.role, now: this.now() });
      return ok ? ({ kind: 'created', userId } as const) : ({ kind: 'exists' } as const);
    });
  }

  /** Sets a user's password (dev profile: its password file was recreated). */
  async resetPassword(email: string, password: string): Promise<boolean> {
    if (passwordProblem(password)) return false;
    return repo.setPasswordHash(this.db, normalizeEmail(email), await hashPassword(password));
  }

  /** A single-use invitation link, shown once (only its hash is stored). */
  async invite(input: { merchantId: string; email: string; role: repo.UserRole; invitedBy: string | null }): Promise<{ kind: 'invited'; url: string; expiresAt: Date } | { kind: 'exists' }> {
    const email = normalizeEmail(input.email);
    if (await repo.findUserByEmail(this.db, email)) return { kind: 'exists' };
    const t = token();
    const now = this.now();
    const expiresAt = new Date(now.getTime() + INVITATION_TTL_SECONDS * 1000);
    await repo.insertInvitation(this.db, { tokenHash: sha256(t), merchantId: input.merchantId, email, role: input.role, invitedBy: input.invitedBy, now, expiresAt });
    // The token travels in the fragment: it never reaches a server log or a Referer header.
    return { kind: 'invited', url: `${this.config.publicBaseUrl.replace(/\/$/, '')}/portal/#/invite/${t}`, expiresAt };
  }

  /** Revokes the unused invitations of this merchant for `email`; returns how many. */
  revokeInvitations(merchantId: string, email: string): Promise<number> {
    return repo.revokeInvitations(this.db, merchantId, normalizeEmail(email));
  }

  /**
   * Uses an invitation: creates the user with this password and signs it in. The token (and that
   * the user does not exist yet) is checked BEFORE the password is hashed, so a bogus link costs a
   * lookup, not a scrypt; every attempt counts against the address like a sign-in (a wrong token
   * is a failed credential), and a success takes it back.
   */
  async acceptInvitation(input: {
    token: string;
    password: string;
    ip: string;
    presented?: string | undefined;
  }): Promise<{ kind: 'ok'; session: NewSession; email: string } | { kind: 'not_usable' } | { kind: 'exists' } | { kind: 'throttled'; retryAfterSeconds: number } | { kind: 'busy' } | PasswordRefused> {
    const problem = passwordProblem(input.password);
    if (problem) return { kind: 'password_invalid', reason: problem };
    const ipKey = `ip:${input.ip}`;
    const wait = await this.attempt([ipKey]);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const inv = await repo.findUsableInvitation(this.db, sha256(input.token), this.now());
    if (!inv) return { kind: 'not_usable' };
    if (await repo.findUserByEmail(this.db, inv.email)) return { kind: 'exists' };
    const passwordHash = await this.gate.run(input.ip, () => hashPassword(input.password));
    if (passwordHash === BUSY) {
      await repo.uncountAttempt(this.db, [ipKey]);
      return { kind: 'busy' };
    }
    return this.db
      .transaction(async (tx) => {
        await repo.uncountAttempt(tx, [ipKey]);
        const inv = await repo.consumeInvitation(tx, sha256(input.token), this.now());
        if (!inv) return { kind: 'not_usable' } as const;
        const userId = `usr_${randomBytes(12).toString('hex')}`;
        if (!(await repo.insertUser(tx, { id: userId, merchantId: inv.merchant_id, email: inv.email, passwordHash, role: inv.role, now: this.now() }))) {
          // Roll back the consumption: the invitation stays usable once the conflicting user is gone.
          throw new ExistsError();
        }
        return { kind: 'ok', email: inv.email, session: await this.openSession(tx, { userId, merchantId: inv.merchant_id, role: inv.role, replacing: input.presented }) } as const;
      })
      .catch((err: unknown) => {
        if (err instanceof ExistsError) return { kind: 'exists' } as const;
        throw err;
      });
  }
}

class ExistsError extends Error {}
