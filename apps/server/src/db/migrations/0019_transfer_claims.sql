-- One claims ledger across every rail (docs/attribution.md, "One transfer, one purpose").
--
-- Every incoming transfer any path of Tollgate looks at is claimed by at most one purpose: an
-- order (merchant API, checkout, quick-pay, DELEGATE), a machine-payment challenge, an x402
-- settlement. The claim is this row, keyed by the transfer, written in the same transaction (or
-- statement) as the state change it causes; a second claim of the same key fails on the primary
-- key, so whichever path reaches a transfer first owns it and every other path sees it as spent.
--
-- tx_ref: the EVM transaction hash (0x…, lowercase) or the Solana signature.
-- log_index: the EVM log index or the Solana instruction index; -1 claims every transfer of a
--   transaction Tollgate sends itself (x402 settle, relay, DELEGATE settlement, refund): it is
--   written with the settlement row, before the transaction is broadcast, when log indexes are
--   not known yet.
CREATE TABLE transfer_claims (
  chain_id    integer NOT NULL,
  tx_ref      text COLLATE "C" NOT NULL,
  log_index   integer NOT NULL CHECK (log_index >= -1),
  purpose     text NOT NULL CHECK (purpose IN ('order', 'mpp_challenge', 'x402_settlement', 'refund')),
  purpose_id  text COLLATE "C" NOT NULL,
  amount_wei  numeric(78,0) CHECK (amount_wei >= 0),
  payer       text COLLATE "C",
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, tx_ref, log_index),
  -- a claim of one transfer says what it paid and who paid it; a whole-transaction claim may not know yet
  CONSTRAINT transfer_claims_transfer_complete CHECK (log_index = -1 OR (amount_wei IS NOT NULL AND payer IS NOT NULL))
);
CREATE INDEX transfer_claims_purpose_idx ON transfer_claims (purpose, purpose_id);
-- a challenge is paid by one transfer (what mpp_claims.challenge_id UNIQUE said)
CREATE UNIQUE INDEX transfer_claims_one_per_challenge ON transfer_claims (purpose_id) WHERE purpose = 'mpp_challenge' AND log_index >= 0;

-- Existing claims. Orders first: where old data counted one transfer twice (the defect this
-- ledger fixes), the order keeps it and the machine payment's receipt stays as issued.
INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer, created_at)
SELECT DISTINCT ON (t.chain_id, t.tx_hash, t.log_index)
       t.chain_id, t.tx_hash, t.log_index, 'order', t.order_id, t.amount_wei, t.from_address, t.seen_at
  FROM chain_transfers t
 WHERE t.orphaned_at IS NULL AND t.order_id IS NOT NULL
 ORDER BY t.chain_id, t.tx_hash, t.log_index, t.id DESC
ON CONFLICT DO NOTHING;

INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer, created_at)
SELECT m.chain_id, m.tx_hash, m.log_index, 'mpp_challenge', m.challenge_id, COALESCE(c.paid_amount_wei, c.amount_wei),
       COALESCE(NULLIF(c.payer_addr, ''), (SELECT t.from_address FROM chain_transfers t
          WHERE t.chain_id = m.chain_id AND t.tx_hash = m.tx_hash AND t.log_index = m.log_index LIMIT 1), ''),
       m.created_at
  FROM mpp_claims m JOIN mpp_challenges c ON c.id = m.challenge_id
ON CONFLICT DO NOTHING;

INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, created_at)
SELECT s.chain_id, s.tx_hash, -1,
       CASE WHEN s.kind = 'refund' THEN 'refund'
            WHEN s.kind = 'x402' AND a.challenge_id IS NOT NULL THEN 'mpp_challenge'
            WHEN s.kind = 'x402' THEN 'x402_settlement'
            ELSE 'order' END,
       CASE WHEN s.kind = 'x402' THEN COALESCE(a.challenge_id, s.order_id) ELSE s.order_id END,
       s.created_at
  FROM settlements s LEFT JOIN x402_authorizations a ON s.kind = 'x402' AND a.id = s.order_id
ON CONFLICT DO NOTHING;

DROP TABLE mpp_claims;

-- The watcher's record of a transfer another purpose claimed first: seen, never an order's payment.
ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_match_status_check;
ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_match_status_check
  CHECK (match_status IN ('matched', 'underpaid', 'late', 'duplicate', 'unmatched', 'claimed'));

-- The watcher asks whether an open challenge named for this payer fits a transfer (precedence).
CREATE INDEX mpp_challenges_open_terms_idx ON mpp_challenges (chain_id, recipient, payer_addr) WHERE status = 'OPEN';
