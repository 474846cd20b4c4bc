// SQL of the portal's second factor (TOTP + recovery codes) and password reset links (migration 0024).
import type { Queryable } from '../db/database.ts';

export async function setPendingTotp(q: Queryable, userId: string, encrypted: string): Promise<void> {
  await q.query('UPDATE portal_users SET totp_pending_ciphertext = $2 WHERE id = $1', [userId, encrypted]);
}

/** The pending secret becomes the user's factor (the confirming code's step is recorded as used). */
export async function enableTotp(q: Queryable, userId: string, step: number): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE portal_users SET totp_secret_ciphertext = totp_pending_ciphertext, totp_pending_ciphertext = NULL, totp_last_step = $2 WHERE id = $1 AND totp_pending_ciphertext IS NOT NULL', [userId, step]);
  return rowCount === 1;
}

export async function disableTotp(q: Queryable, userId: string): Promise<void> {
  await q.query('UPDATE portal_users SET totp_secret_ciphertext = NULL, totp_pending_ciphertext = NULL, totp_last_step = NULL WHERE id = $1', [userId]);
  await q.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
}

/**
 * Records `step` as used if it is later than the last one used: false when the code (or an
 * earlier one) already signed in. One statement, so two concurrent sign-ins with one code cannot
 * both pass.
 */
export async function useTotpStep(q: Queryable, userId: string, step: number): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE portal_users SET totp_last_step = $2 WHERE id = $1 AND totp_secret_ciphertext IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)', [userId, step]);
  return rowCount === 1;
}

export async function replaceRecoveryCodes(q: Queryable, userId: string, hashes: readonly string[]): Promise<void> {
  await q.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
  await q.query('INSERT INTO portal_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [userId, hashes]);
}

/** Uses one recovery code; false when unknown or already used. */
export async function useRecoveryCode(q: Queryable, userId: string, hash: string, now: Date): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE portal_recovery_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL', [userId, hash, now]);
  return rowCount === 1;
}

export async function countUnusedRecoveryCodes(q: Queryable, userId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM portal_recovery_codes WHERE user_id = $1 AND used_at IS NULL', [userId]);
  return rows[0]!.n;
}

export async function merchantRequiresTotp(q: Queryable, merchantId: string): Promise<boolean> {
  const { rows } = await q.query<{ r: boolean }>('SELECT portal_require_totp AS r FROM merchants WHERE id = $1', [merchantId]);
  return rows[0]?.r ?? false;
}

export async function setMerchantRequiresTotp(q: Queryable, merchantId: string, required: boolean): Promise<void> {
  await q.query('UPDATE merchants SET portal_require_totp = $2 WHERE id = $1', [merchantId, required]);
}

/** The session may use the whole portal again (its user has set up a second factor). */
export async function endEnrollment(q: Queryable, userId: string): Promise<void> {
  await q.query('UPDATE portal_sessions SET totp_enrollment = false WHERE user_id = $1', [userId]);
}

// ---- password reset links

export async function insertReset(q: Queryable, r: { tokenHash: string; userId: string; issuedBy: 'operator' | 'email'; now: Date; expiresAt: Date }): Promise<void> {
  // A new link replaces the user's unused ones: only the newest works.
  await q.query('UPDATE portal_password_resets SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [r.userId, r.now]);
  await q.query('INSERT INTO portal_password_resets (token_hash, user_id, issued_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [r.tokenHash, r.userId, r.issuedBy, r.now, r.expiresAt]);
}

/** The user of a live, unused link (no side effect). */
export async function findUsableReset(q: Queryable, tokenHash: string, now: Date): Promise<{ user_id: string } | undefined> {
  const { rows } = await q.query<{ user_id: string }>(
    `SELECT r.user_id FROM portal_password_resets r JOIN portal_users u ON u.id = r.user_id
      WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $2 AND u.disabled_at IS NULL`,
    [tokenHash, now],
  );
  return rows[0];
}

/** Marks the link used; its user, or undefined when it was used meanwhile. */
export async function consumeReset(q: Queryable, tokenHash: string, now: Date): Promise<{ user_id: string } | undefined> {
  const { rows } = await q.query<{ user_id: string }>('UPDATE portal_password_resets SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id', [tokenHash, now]);
  return rows[0];
}

/** How many links were mailed to this user since `since` (the self-service request is rate-limited). */
export async function countMailedResets(q: Queryable, userId: string, since: Date): Promise<number> {
  const { rows } = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM portal_password_resets WHERE user_id = $1 AND issued_by = 'email' AND created_at > $2", [userId, since]);
  return rows[0]!.n;
}
