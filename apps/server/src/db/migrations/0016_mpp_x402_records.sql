-- An x402 authorization settled for a machine-payment challenge (the `Payment` scheme's
-- `authorization` credential) names that challenge: the merchant sees it as the machine payment,
-- not a second time among its x402 settlements.
ALTER TABLE x402_authorizations ADD COLUMN challenge_id text COLLATE "C";

-- Merchant-visible x402 settlements (GET /api/v1/x402/settlements): found by pay-to address, the
-- merchant's wallets on the chain, newest first.
CREATE INDEX x402_authorizations_recipient_idx ON x402_authorizations (chain_id, recipient, created_at);
-- When `x402.settlement.confirmed` was emitted for it (the worker announces confirmed settlements once).
ALTER TABLE x402_authorizations ADD COLUMN notified_at timestamptz;
CREATE INDEX x402_authorizations_unnotified_idx ON x402_authorizations (created_at) WHERE notified_at IS NULL AND challenge_id IS NULL;
