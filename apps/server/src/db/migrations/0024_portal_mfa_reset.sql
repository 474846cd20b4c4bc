-- Portal account security: a second factor (TOTP, RFC 6238) with recovery codes, enforceable per
-- merchant, and single-use password reset links (issued by the operator, or mailed when SMTP is set).

-- The TOTP secret is encrypted at rest (MASTER_KEY, AES-256-GCM, bound to the user id) like every
-- other secret. totp_pending_ciphertext is the one shown at set-up, until a first code confirms it.
-- totp_last_step: the last accepted 30-second step, so one code signs in once.
ALTER TABLE portal_users ADD COLUMN totp_secret_ciphertext text;
ALTER TABLE portal_users ADD COLUMN totp_pending_ciphertext text;
ALTER TABLE portal_users ADD COLUMN totp_last_step bigint;

-- An owner may require a second factor of every user of the merchant: a user without one is then
-- signed in to a session that can only set one up (portal_sessions.totp_enrollment).
ALTER TABLE merchants ADD COLUMN portal_require_totp boolean NOT NULL DEFAULT false;
ALTER TABLE portal_sessions ADD COLUMN totp_enrollment boolean NOT NULL DEFAULT false;

-- Recovery codes: shown once; only their SHA-256 is kept (each has 60 random bits, not a password).
CREATE TABLE portal_recovery_codes (
  user_id    text COLLATE "C" NOT NULL REFERENCES portal_users (id),
  code_hash  text COLLATE "C" NOT NULL,
  used_at    timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- Password reset links: single use, short-lived; only the SHA-256 of the token is stored.
CREATE TABLE portal_password_resets (
  token_hash  text COLLATE "C" PRIMARY KEY,
  user_id     text COLLATE "C" NOT NULL REFERENCES portal_users (id),
  issued_by   text NOT NULL CHECK (issued_by IN ('operator', 'email')),
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX portal_password_resets_user_idx ON portal_password_resets (user_id);
