// Portal accounts: sign-in (users and the operator), sessions, invitations, throttling. Returns
// typed outcomes; the portal routes map them to HTTP and set the cookie.
//
// Sessions: a random 256-bit id in the cookie, its SHA-256 in portal_sessions. Signing in always
// creates a new id and deletes the one the browser presented, so an id planted before sign-in
// (session fixation) never becomes authenticated. Each session has its own random CSRF token
// (synchronizer token): unsafe requests must echo it in X-CSRF-Token (portal/http.ts).
//
// Throttling: failures are counted per account ('acct:<email>') and per client address
// ('ip:<addr>') in a 15-minute window. 5 failures lock an account, 30 an address, until the window
// ends: an online guesser gets 5 tries per account per 15 min (~480 a day), and one address cannot
// spray many accounts. A success clears the account's count (not the address's).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { getMerchant } from '../merchants/repo.ts';
import { dummyHash, hashPassword, verifyPassword } from './passwords.ts';
import * as repo from './repo.ts';

export const SESSION_TTL_SECONDS = 8 * 3600;
export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
export const THROTTLE_WINDOW_SECONDS = 15 * 60;
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

export type LoginOutcome = { kind: 'ok'; session: NewSession } | { kind: 'failed' } | { kind: 'throttled'; retryAfterSeconds: number };

export class PortalAuth {
  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {}

  private now() {
    return new Date(this.clock.now());
  }

  private async openSession(q: Pick<Database, 'query'>, s: { userId: string | null; merchantId: string | null; role: repo.SessionRole; replacing?: string | undefined }): Promise<NewSession> {
    const now = this.now();
    const sessionId = token();
    const csrfToken = token();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_SECONDS * 1000);
    if (s.replacing) await repo.deleteSession(q as Database, sha256(s.replacing));
    await repo.insertSession(q as Database, { idHash: sha256(sessionId), userId: s.userId, merchantId: s.merchantId, role: s.role, csrfToken, now, expiresAt });
    return { sessionId, csrfToken, expiresAt };
  }

  /** Seconds until the throttle lets `keys` try again, or 0. */
  private async throttled(keys: { acct?: string; ip: string }): Promise<number> {
    const now = this.now();
    const all = [keys.ip, ...(keys.acct ? [keys.acct] : [])];
    const counts = await repo.loginFailures(this.db, all, now, THROTTLE_WINDOW_SECONDS);
    let wait = 0;
    for (const [key, c] of counts) {
      const max = key.startsWith('ip:') ? MAX_ADDRESS_FAILURES : MAX_ACCOUNT_FAILURES;
      if (c.failures >= max) wait = Math.max(wait, Math.ceil((c.windowStart.getTime() + THROTTLE_WINDOW_SECONDS * 1000 - now.getTime()) / 1000));
    }
    return wait;
  }

  /** Email + password sign-in. `presented` is the session cookie the browser sent, if any (deleted). */
  async login(input: { email: string; password: string; ip: string; presented?: string | undefined }): Promise<LoginOutcome> {
    const email = normalizeEmail(input.email);
    const keys = { acct: `acct:${email}`, ip: `ip:${input.ip}` };
    const wait = await this.throttled(keys);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const user = await repo.findUserByEmail(this.db, email);
    // Always one scrypt, whether the user exists or not: same time for both answers.
    const ok = await verifyPassword(input.password, user?.password_hash ?? (await dummyHash()));
    if (!user || !ok || user.disabled_at) {
      await repo.recordLoginFailure(this.db, [keys.acct, keys.ip], this.now(), THROTTLE_WINDOW_SECONDS);
      return { kind: 'failed' };
    }
    return this.db.transaction(async (tx) => {
      await repo.clearLoginFailures(tx, keys.acct);
      return { kind: 'ok', session: await this.openSession(tx, { userId: user.id, merchantId: user.merchant_id, role: user.role, replacing: input.presented }) } as const;
    });
  }

  /** The operator signs in with the admin token (ADMIN_TOKEN); throttled per address like users. */
  async operatorLogin(input: { adminToken: string; ip: string; presented?: string | undefined }): Promise<LoginOutcome | { kind: 'disabled' }> {
    if (!this.config.adminToken) return { kind: 'disabled' };
    // Per address only: an account lock on the one operator credential would let anyone lock the
    // operator out with five wrong guesses.
    const keys = { ip: `ip:${input.ip}` };
    const wait = await this.throttled(keys);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const ok = timingSafeEqual(Buffer.from(sha256(input.adminToken)), Buffer.from(sha256(this.config.adminToken)));
    if (!ok) {
      await repo.recordLoginFailure(this.db, [keys.ip], this.now(), THROTTLE_WINDOW_SECONDS);
      return { kind: 'failed' };
    }
    return { kind: 'ok', session: await this.openSession(this.db, { userId: null, merchantId: null, role: 'operator', replacing: input.presented }) };
  }

  async session(sessionId: string): Promise<repo.SessionRow | undefined> {
    return repo.findSession(this.db, sha256(sessionId), this.now());
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
  async createUser(input: { merchantId: string; email: string; password: string; role: repo.UserRole }): Promise<{ kind: 'created'; userId: string } | { kind: 'merchant_not_found' } | { kind: 'exists' }> {
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

  /** Uses an invitation: creates the user with this password and signs it in. */
  async acceptInvitation(input: { token: string; password: string; presented?: string | undefined }): Promise<{ kind: 'ok'; session: NewSession; email: string } | { kind: 'not_usable' } | { kind: 'exists' }> {
    const passwordHash = await hashPassword(input.password);
    return this.db.transaction(async (tx) => {
      const inv = await repo.consumeInvitation(tx, sha256(input.token), this.now());
      if (!inv) return { kind: 'not_usable' } as const;
      const userId = `usr_${randomBytes(12).toString('hex')}`;
      if (!(await repo.insertUser(tx, { id: userId, merchantId: inv.merchant_id, email: inv.email, passwordHash, role: inv.role, now: this.now() }))) {
        // Roll back the consumption: the invitation stays usable once the conflicting user is gone.
        throw new ExistsError();
      }
      return { kind: 'ok', email: inv.email, session: await this.openSession(tx, { userId, merchantId: inv.merchant_id, role: inv.role, replacing: input.presented }) } as const;
    }).catch((err: unknown) => {
      if (err instanceof ExistsError) return { kind: 'exists' } as const;
      throw err;
    });
  }
}

class ExistsError extends Error {}
