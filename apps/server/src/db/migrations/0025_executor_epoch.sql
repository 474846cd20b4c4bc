-- The chain history an executor nonce belongs to. A chain id names a chain, not one history: a
-- local chain restarted under the same id (the dev profile's anvil after `npm start` restarts, a
-- devnet reset) starts again at nonce 0 while this database remembers nonces up to N. Rows now
-- carry the executor epoch of their chain, and nonces are unique per epoch: on a reset (another
-- genesis block, or the chain's nonce below one of our confirmed transactions) the epoch moves on
-- and the executor resumes from the chain's own nonce (settlement/executor.ts).
ALTER TABLE settlements ADD COLUMN epoch integer NOT NULL DEFAULT 0 CHECK (epoch >= 0);

DROP INDEX settlements_nonce_key;
CREATE UNIQUE INDEX settlements_nonce_key ON settlements (chain_id, executor, epoch, nonce) WHERE attempt = 0;

-- Per chain: the genesis (block 0 hash) the executor last saw and the current epoch. Rows written
-- before this migration are epoch 0, the epoch of the first genesis seen.
CREATE TABLE executor_epochs (
  chain_id    integer PRIMARY KEY,
  genesis     text NOT NULL CHECK (genesis ~ '^0x[0-9a-f]{64}$'),
  epoch       integer NOT NULL DEFAULT 0 CHECK (epoch >= 0),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
