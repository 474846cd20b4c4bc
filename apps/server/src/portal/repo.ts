// SQL of portal accounts: users, sessions, invitations, sign-in throttling (migrations 0011, 0018,
// 0022, 0024; the second factor's and reset links' own SQL is in mfa-repo.ts).
import type { Queryable } from '../db/database.ts';

export type UserRole = 'owner' | 'developer' | 'viewer';
export type SessionRole = UserRole | 'operator';

export interface UserRow {
  id: string;
  merchant_id: string;
  email: string;
  password_hash: string;
  role: UserRole;
  created_at: Date;
  disabled_at: Date | null;
  /** encrypted TOTP secret (mfa.ts); null: no second factor */
  totp_secret_ciphertext: string | null;
  totp_pending_ciphertext: string | null;
  /** the last accepted TOTP time step (a code is accepted once) */
  totp_last_step: string | null;
}

export interface SessionRow {
  id_hash: string;
  user_id: string | null;
  merchant_id: string | null;
  role: SessionRole;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  /** operator sessions: fingerprint of the ADMIN_TOKEN they signed in with (auth.ts) */
  operator_key_fp: string | null;
  /** signed in without the second factor the merchant requires: may only set one up (mfa.ts) */
  totp_enrollment: boolean;
  /** whether the session's user has a second factor */
  totp_enabled: boolean;
  email: string | null;
  merchant_name: string | null;
}

/** Inserts a user; false when the email is taken. */
export async function insertUser(q: Queryable, u: { id: string; merchantId: string; email: string; passwordHash: string; role: UserRole; now: Date }): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO portal_users (id, merchant_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (email) DO NOTHING`,
    [u.id, u.merchantId, u.email, u.passwordHash, u.role, u.now],
  );
  return rowCount === 1;
}

export async function setPasswordHash(q: Queryable, email: string, passwordHash: string): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE portal_users SET password_hash = $2 WHERE email = $1', [email, passwordHash]);
  return rowCount === 1;
}

export async function setPasswordHashById(q: Queryable, userId: string, passwordHash: string): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE portal_users SET password_hash = $2 WHERE id = $1 AND disabled_at IS NULL', [userId, passwordHash]);
  return rowCount === 1;
}

export async function findUserById(q: Queryable, userId: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>('SELECT * FROM portal_users WHERE id = $1', [userId]);
  return rows[0];
}

export async function findUserByEmail(q: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>('SELECT * FROM portal_users WHERE email = $1', [email]);
  return rows[0];
}

export async function listUsers(q: Queryable, merchantId: string): Promise<UserRow[]> {
  const { rows } = await q.query<UserRow>('SELECT * FROM portal_users WHERE merchant_id = $1 ORDER BY created_at, id', [merchantId]);
  return rows;
}

/**
 * Disables a user of this merchant, ends its sessions and revokes the invitations it sent and
 * nobody used yet (an owner's pending invitation would otherwise still create an owner after the
 * owner is gone); false when there is no such user.
 */
export async function disableUser(q: Queryable, merchantId: string, userId: string, now: Date): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE portal_users SET disabled_at = coalesce(disabled_at, $3) WHERE id = $1 AND merchant_id = $2', [userId, merchantId, now]);
  if (rowCount !== 1) return false;
  await q.query('DELETE FROM portal_sessions WHERE user_id = $1', [userId]);
  await q.query('DELETE FROM portal_invitations WHERE invited_by = $1 AND merchant_id = $2 AND used_at IS NULL', [userId, merchantId]);
  return true;
}

export async function insertSession(
  q: Queryable,
  s: { idHash: string; userId: string | null; merchantId: string | null; role: SessionRole; csrfToken: string; now: Date; expiresAt: Date; operatorKeyFp?: string | undefined; totpEnrollment?: boolean | undefined },
): Promise<void> {
  await q.query(`INSERT INTO portal_sessions (id_hash, user_id, merchant_id, role, csrf_token, created_at, expires_at, operator_key_fp, totp_enrollment) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
    s.idHash,
    s.userId,
    s.merchantId,
    s.role,
    s.csrfToken,
    s.now,
    s.expiresAt,
    s.operatorKeyFp ?? null,
    s.totpEnrollment ?? false,
  ]);
}

/** Ends every session of a user but `keep` (a session id hash); returns how many ended. */
export async function deleteUserSessions(q: Queryable, userId: string, keep?: string): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM portal_sessions WHERE user_id = $1 AND id_hash <> $2', [userId, keep ?? '']);
  return rowCount;
}

/** Ends every operator session; returns how many ended. */
export async function deleteOperatorSessions(q: Queryable): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM portal_sessions WHERE role = 'operator'");
  return rowCount;
}

/**
 * A live session with its user's email and its merchant's name. A disabled user's sessions were
 * deleted, and the join refuses them anyway. An operator session lives only while it carries
 * `operatorKeyFp`, the fingerprint of the current ADMIN_TOKEN (none: no operator session lives).
 */
export async function findSession(q: Queryable, idHash: string, now: Date, operatorKeyFp: string | null): Promise<SessionRow | undefined> {
  const { rows } = await q.query<SessionRow>(
    `SELECT s.*, u.email, m.name AS merchant_name, (u.totp_secret_ciphertext IS NOT NULL) AS totp_enabled
       FROM portal_sessions s
       LEFT JOIN portal_users u ON u.id = s.user_id
       LEFT JOIN merchants m ON m.id = s.merchant_id
      WHERE s.id_hash = $1 AND s.expires_at > $2 AND (s.user_id IS NULL OR u.disabled_at IS NULL)
        AND (s.role <> 'operator' OR s.operator_key_fp = $3)`,
    [idHash, now, operatorKeyFp],
    { name: 'portal_find_session' },
  );
  return rows[0];
}

export async function deleteSession(q: Queryable, idHash: string): Promise<void> {
  await q.query('DELETE FROM portal_sessions WHERE id_hash = $1', [idHash]);
}

export async function pruneSessions(q: Queryable, now: Date): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM portal_sessions WHERE expires_at <= $1', [now]);
  return rowCount;
}

/** The operator's session looks at another merchant; false when the merchant does not exist. */
export async function selectSessionMerchant(q: Queryable, idHash: string, merchantId: string): Promise<boolean> {
  const { rowCount } = await q.query(`UPDATE portal_sessions SET merchant_id = m.id FROM merchants m WHERE portal_sessions.id_hash = $1 AND portal_sessions.role = 'operator' AND m.id = $2`, [idHash, merchantId]);
  return rowCount === 1;
}

export async function insertInvitation(q: Queryable, i: { tokenHash: string; merchantId: string; email: string; role: UserRole; invitedBy: string | null; now: Date; expiresAt: Date }): Promise<void> {
  await q.query(`INSERT INTO portal_invitations (token_hash, merchant_id, email, role, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [i.tokenHash, i.merchantId, i.email, i.role, i.invitedBy, i.now, i.expiresAt]);
}

// An invitation is usable while unused, unexpired, and its sender (if a user) is not disabled:
// invitations a disabled user sent are deleted when it is disabled, and this guards the ones of
// users disabled before that rule existed.
const USABLE = `used_at IS NULL AND expires_at > $2
  AND NOT EXISTS (SELECT 1 FROM portal_users iu WHERE iu.id = portal_invitations.invited_by AND iu.disabled_at IS NOT NULL)`;

/** A usable invitation, without using it (checked before any password is hashed). */
export async function findUsableInvitation(q: Queryable, tokenHash: string, now: Date): Promise<{ merchant_id: string; email: string; role: UserRole } | undefined> {
  const { rows } = await q.query<{ merchant_id: string; email: string; role: UserRole }>(`SELECT merchant_id, email, role FROM portal_invitations WHERE token_hash = $1 AND ${USABLE}`, [tokenHash, now]);
  return rows[0];
}

/** Marks a usable invitation used and returns it; undefined otherwise (single use). */
export async function consumeInvitation(q: Queryable, tokenHash: string, now: Date): Promise<{ merchant_id: string; email: string; role: UserRole } | undefined> {
  const { rows } = await q.query<{ merchant_id: string; email: string; role: UserRole }>(`UPDATE portal_invitations SET used_at = $2 WHERE token_hash = $1 AND ${USABLE} RETURNING merchant_id, email, role`, [tokenHash, now]);
  return rows[0];
}

/** Revokes (deletes) the unused invitations of this merchant for `email`; returns how many. */
export async function revokeInvitations(q: Queryable, merchantId: string, email: string): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM portal_invitations WHERE merchant_id = $1 AND email = $2 AND used_at IS NULL', [merchantId, email]);
  return rowCount;
}

export async function listOpenInvitations(q: Queryable, merchantId: string, now: Date): Promise<{ email: string; role: UserRole; created_at: Date; expires_at: Date }[]> {
  const { rows } = await q.query<{ email: string; role: UserRole; created_at: Date; expires_at: Date }>(`SELECT email, role, created_at, expires_at FROM portal_invitations WHERE merchant_id = $1 AND ${USABLE} ORDER BY created_at`, [merchantId, now]);
  return rows;
}

/**
 * Counts one attempt for each key, in one statement, BEFORE the credential is checked, and returns
 * each key's count including this attempt; a key whose window has passed starts a new window.
 * Reading the count, checking, then recording let every concurrent guess see the same count (59
 * guesses were checked against a limit of 5): here the row lock of the upsert orders them, and
 * the 6th concurrent guess already sees 6. Keys are locked in sorted order (no deadlock between
 * two sign-ins sharing one key).
 */
export async function countAttempt(q: Queryable, keys: string[], now: Date, windowSeconds: number): Promise<Map<string, { failures: number; windowStart: Date }>> {
  const { rows } = await q.query<{ key: string; failures: number; window_start: Date }>(
    `INSERT INTO portal_login_failures (key, failures, window_start) SELECT k, 1, $2 FROM unnest($1::text[]) AS k ORDER BY k
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN portal_login_failures.window_start > $3 THEN portal_login_failures.failures + 1 ELSE 1 END,
       window_start = CASE WHEN portal_login_failures.window_start > $3 THEN portal_login_failures.window_start ELSE $2 END
     RETURNING key, failures, window_start`,
    [[...keys].sort(), now, new Date(now.getTime() - windowSeconds * 1000)],
  );
  return new Map(rows.map((r) => [r.key, { failures: r.failures, windowStart: r.window_start }]));
}

/** Takes back an attempt counted by countAttempt that turned out not to be a failure. */
export async function uncountAttempt(q: Queryable, keys: string[]): Promise<void> {
  await q.query('UPDATE portal_login_failures SET failures = failures - 1 WHERE key = ANY($1::text[]) AND failures > 0', [keys]);
}

export async function clearLoginFailures(q: Queryable, key: string): Promise<void> {
  await q.query('DELETE FROM portal_login_failures WHERE key = $1', [key]);
}

/** Failure windows that ended before `before` count nothing any more. */
export async function pruneLoginFailures(q: Queryable, before: Date): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM portal_login_failures WHERE window_start < $1', [before]);
  return rowCount;
}

export async function listMerchants(q: Queryable): Promise<{ id: string; name: string; created_at: Date }[]> {
  const { rows } = await q.query<{ id: string; name: string; created_at: Date }>('SELECT id, name, created_at FROM merchants ORDER BY created_at, id LIMIT 1000');
  return rows;
}

export async function updateMerchantSettings(q: Queryable, merchantId: string, s: { name: string; logoUrl: string | null }): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE merchants SET name = $2, logo_url = $3 WHERE id = $1', [merchantId, s.name, s.logoUrl]);
  return rowCount === 1;
}
