-- When `mpp.payment.confirmed` was emitted for a paid challenge (the worker announces each paid
-- machine payment once, mpp/events.ts; the verify that pays it does not write this column).
ALTER TABLE mpp_challenges ADD COLUMN notified_at timestamptz;
-- Payments made before this migration count as announced: merchants never had an event for them,
-- and a first tick that sent one for every past payment would flood their endpoints with old news
-- (the list GET /api/v1/mpp/payments already shows them). Marked with the migration's time.
UPDATE mpp_challenges SET notified_at = now() WHERE status = 'PAID';
-- The worker's scan: paid and not announced yet, oldest payment first. Empty in the steady state.
CREATE INDEX mpp_challenges_unnotified_idx ON mpp_challenges (paid_at) WHERE status = 'PAID' AND notified_at IS NULL;
