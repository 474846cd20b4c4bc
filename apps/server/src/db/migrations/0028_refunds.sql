-- One refunds model for every rail (docs/refunds.md). The card rail's refunds table becomes it:
-- every refund of every order, whoever asked and however it is paid back.
--   rail card:     sent through the card processor; processor_refund_id names it there.
--   rail direct:   the merchant sends the tokens back from the wallet that was paid (from_address)
--                  to the payer (to_address); the watcher links the transfer (tx_hash, transfer_id)
--                  and claims it for the refund, so it can never count as a payment.
--   rail delegate: the operator's executor returns a FAILED order's pooled funds (tx_hash).
-- status: pending (asked / waiting for the transfer or receipt), succeeded, failed.
-- Never more than was paid: every writer locks the order row and sums the rows not failed in
-- the same transaction (refunds/repo.ts).
ALTER TABLE card_refunds RENAME TO refunds;
ALTER INDEX card_refunds_order_idx RENAME TO refunds_order_idx;
ALTER INDEX card_refunds_processor_key RENAME TO refunds_processor_key;

ALTER TABLE refunds
  ADD COLUMN rail           text NOT NULL DEFAULT 'card' CHECK (rail IN ('card', 'direct', 'delegate')),
  -- the order's fiat currency (card) or token symbol (crypto)
  ADD COLUMN currency       text,
  ADD COLUMN chain_id       integer,
  ADD COLUMN token_contract text COLLATE "C",
  ADD COLUMN from_address   text COLLATE "C",
  ADD COLUMN to_address     text COLLATE "C",
  ADD COLUMN tx_hash        text COLLATE "C",
  ADD COLUMN transfer_id    bigint REFERENCES chain_transfers (id),
  ADD COLUMN completed_at   timestamptz;
ALTER TABLE refunds ALTER COLUMN rail DROP DEFAULT;

UPDATE refunds r SET currency = o.fiat_currency, completed_at = CASE WHEN r.status = 'pending' THEN NULL ELSE r.updated_at END
  FROM orders o WHERE o.id = r.order_id;

-- A DELEGATE order's pooled funds go back once: a second live refund of it fails here.
CREATE UNIQUE INDEX refunds_one_delegate ON refunds (order_id) WHERE rail = 'delegate' AND status <> 'failed';
-- One transfer pays back one refund.
CREATE UNIQUE INDEX refunds_transfer_key ON refunds (transfer_id) WHERE transfer_id IS NOT NULL;
-- The watcher's look-up: DIRECT refunds still waiting for their transfer, per chain.
CREATE INDEX refunds_direct_pending ON refunds (chain_id, to_address) WHERE rail = 'direct' AND status = 'pending';
