-- An x402 authorization settled for a machine-payment challenge (the `Payment` scheme's
-- `authorization` credential) names that challenge: the merchant sees it as the machine payment,
-- not a second time among its x402 settlements.
ALTER TABLE x402_authorizations ADD COLUMN challenge_id text COLLATE "C";
