-- DELEGATE settlement: one row per transaction the executor sends (a settlement or a refund of an
-- order). The row is written BEFORE the transaction is broadcast, with the signed raw transaction,
-- its hash and nonce, so a process killed at any point can finish the work on restart by
-- re-broadcasting the same bytes (same hash: the chain takes it at most once) and reading its
-- receipt. The settlement contract's once-per-order rule backs this up on chain.
-- status: pending (recorded, maybe not broadcast) → sent (the node accepted it) →
--         confirmed (mined, succeeded, `confirmations` deep) | failed (reverted, or never sendable).
CREATE TABLE settlements (
  id              bigserial PRIMARY KEY,
  chain_id        integer NOT NULL,
  order_id        text COLLATE "C" NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('settle', 'refund')),
  executor        text NOT NULL,
  nonce           bigint NOT NULL CHECK (nonce >= 0),
  raw_tx          text NOT NULL,
  tx_hash         text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'sent', 'confirmed', 'failed')),
  failure_reason  text,
  block_number    bigint,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- an order is settled (or refunded) by one transaction: a second attempt finds this row
  UNIQUE (chain_id, order_id, kind),
  -- a nonce is signed once per executor and chain
  UNIQUE (chain_id, executor, nonce),
  CONSTRAINT settlements_hex_lowercase CHECK (
    executor ~ '^0x[0-9a-f]{40}$' AND tx_hash ~ '^0x[0-9a-f]{64}$' AND raw_tx ~ '^0x[0-9a-f]+$')
);

-- the reconciler's scan: unfinished rows of a chain
CREATE INDEX settlements_unfinished ON settlements (chain_id, id) WHERE status IN ('pending', 'sent');
