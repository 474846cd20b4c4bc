-- Portal account security (docs/portal.md): an operator session remembers which ADMIN_TOKEN it
-- signed in with, as a keyed fingerprint (HMAC-SHA256 under MASTER_KEY, never the token), and
-- lives only while that is still the configured token: rotating ADMIN_TOKEN ends every operator
-- session. Sessions from before this column have none and end at once.
ALTER TABLE portal_sessions ADD COLUMN operator_key_fp text COLLATE "C";
