// Password reset through a single-use link (only its SHA-256 is stored; the token travels in the
// URL fragment, like invitations, so it never reaches a server log or a Referer header).
//
// Two ways to get one: the operator issues it (`tollgate portal reset-link EMAIL`, no mail server
// needed) and hands it over out of band; or, when SMTP_URL is set, the user asks on the sign-in
// page and the link is mailed. The request always answers the same, whether the email has an
// account or not, and the mail is sent after the answer, so neither the answer nor its timing
// tells an outsider which emails have accounts. Completing a reset sets the password and ends
// every session of the user; the second factor stays (a reset does not bypass it).
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { processLog } from '../log.ts';
import { normalizeEmail, sha256, type PasswordRefused, type PortalAuth } from './auth.ts';
import { BUSY } from './hashgate.ts';
import type { Mailer } from './mailer.ts';
import * as mrepo from './mfa-repo.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import * as repo from './repo.ts';

const OPERATOR_RESET_TTL_SECONDS = 24 * 3600;
const MAILED_RESET_TTL_SECONDS = 30 * 60;
/** Mailed links per user per hour: enough for a lost mail, not a mailbomb. */
const MAILED_RESETS_PER_HOUR = 3;

export class PasswordResets {
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly auth: PortalAuth;
  private readonly mailer: Mailer | undefined;
  constructor(db: Database, config: Config, clock: Clock, auth: PortalAuth, mailer: Mailer | undefined) {
    this.db = db;
    this.config = config;
    this.clock = clock;
    this.auth = auth;
    this.mailer = mailer;
  }

  private now() {
    return new Date(this.clock.now());
  }

  private async issue(userId: string, by: 'operator' | 'email', ttlSeconds: number): Promise<{ url: string; expiresAt: Date }> {
    const t = randomBytes(32).toString('base64url');
    const now = this.now();
    const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
    await this.db.transaction((tx) => mrepo.insertReset(tx, { tokenHash: sha256(t), userId, issuedBy: by, now, expiresAt }));
    return { url: `${this.config.publicBaseUrl.replace(/\/$/, '')}/portal/#/reset/${t}`, expiresAt };
  }

  /** The operator's link for `email` (a newer link voids older unused ones). */
  async issueByOperator(email: string): Promise<{ kind: 'issued'; url: string; expiresAt: Date; email: string } | { kind: 'not_found' }> {
    const user = await repo.findUserByEmail(this.db, normalizeEmail(email));
    if (!user || user.disabled_at) return { kind: 'not_found' };
    return { kind: 'issued', email: user.email, ...(await this.issue(user.id, 'operator', OPERATOR_RESET_TTL_SECONDS)) };
  }

  /**
   * A user asks for a mailed link. `unavailable` without SMTP; otherwise `accepted` whatever the
   * email, counted against the address like a sign-in attempt; at most MAILED_RESETS_PER_HOUR
   * mails per account.
   */
  async request(email: string, ip: string): Promise<{ kind: 'accepted' } | { kind: 'unavailable' } | { kind: 'throttled'; retryAfterSeconds: number }> {
    const mailer = this.mailer;
    if (!mailer) return { kind: 'unavailable' };
    const wait = await this.auth.attempt([`ip:${ip}`]);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const user = await repo.findUserByEmail(this.db, normalizeEmail(email));
    if (!user || user.disabled_at) return { kind: 'accepted' };
    if ((await mrepo.countMailedResets(this.db, user.id, new Date(this.clock.now() - 3600_000))) >= MAILED_RESETS_PER_HOUR) return { kind: 'accepted' };
    const { url } = await this.issue(user.id, 'email', MAILED_RESET_TTL_SECONDS);
    const text =
      `Someone (hopefully you) asked to reset the password of ${user.email} on the Tollgate merchant portal.\n\n` +
      `Set a new password here within ${MAILED_RESET_TTL_SECONDS / 60} minutes (the link works once):\n${url}\n\n` +
      'If you did not ask for this, ignore this mail: your password stays as it is.\n';
    // After the answer: its timing must not depend on whether the account exists. The log line
    // names neither the address nor the link.
    setImmediate(() => {
      mailer.send({ to: user.email, subject: 'Reset your Tollgate portal password', text }).catch((err: unknown) => {
        processLog.error({ user_id: user.id, err: (err as Error).message?.replace(/\S+@\S+/g, '[address]') }, 'portal: password reset mail not sent');
      });
    });
    return { kind: 'accepted' };
  }

  /**
   * Sets a new password with a link. The token is checked before any hashing (a bogus link costs a
   * lookup); each try counts against the address like a sign-in.
   */
  async complete(input: { token: string; password: string; ip: string }): Promise<{ kind: 'reset'; email: string; endedSessions: number } | { kind: 'not_usable' } | { kind: 'throttled'; retryAfterSeconds: number } | { kind: 'busy' } | PasswordRefused> {
    const problem = passwordProblem(input.password);
    if (problem) return { kind: 'password_invalid', reason: problem };
    const ipKey = `ip:${input.ip}`;
    const wait = await this.auth.attempt([ipKey]);
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
    const hash = sha256(input.token);
    if (!(await mrepo.findUsableReset(this.db, hash, this.now()))) return { kind: 'not_usable' };
    const passwordHash = await this.auth.gate.run(input.ip, () => hashPassword(input.password));
    if (passwordHash === BUSY) {
      await repo.uncountAttempt(this.db, [ipKey]);
      return { kind: 'busy' };
    }
    return this.db.transaction(async (tx) => {
      const r = await mrepo.consumeReset(tx, hash, this.now());
      const user = r && (await repo.findUserById(tx, r.user_id));
      if (!user || !(await repo.setPasswordHashById(tx, user.id, passwordHash))) return { kind: 'not_usable' } as const;
      await repo.uncountAttempt(tx, [ipKey]);
      await repo.clearLoginFailures(tx, `acct:${user.email}`);
      return { kind: 'reset', email: user.email, endedSessions: await repo.deleteUserSessions(tx, user.id) } as const;
    });
  }
}
