-- Fee bumping of the executor's stuck transactions: a transaction left unmined past the chain's
-- threshold is replaced by another signed with the SAME nonce and higher fees. Each replacement is
-- a new row (attempt 1, 2, …) recorded before it is broadcast, like the first one, so a process
-- killed at any point finds every signed variant on restart. All attempts of one (order, kind)
-- share a nonce: the chain mines at most one of them. That one ends confirmed (or failed when it
-- reverted) and the others become `replaced` in the same statement, so a settlement has exactly one
-- finished row, the one the settlement worker applies to the order.
ALTER TABLE settlements ADD COLUMN attempt integer NOT NULL DEFAULT 0 CHECK (attempt >= 0);

ALTER TABLE settlements DROP CONSTRAINT settlements_status_check;
ALTER TABLE settlements ADD CONSTRAINT settlements_status_check CHECK (status IN ('pending', 'sent', 'confirmed', 'failed', 'replaced'));

-- was UNIQUE (chain_id, order_id, kind): one row per attempt now; attempt 0 is the one a second
-- prepare of the same order collides with, so an order still gets one nonce
ALTER TABLE settlements DROP CONSTRAINT settlements_chain_id_order_id_kind_key;
ALTER TABLE settlements ADD CONSTRAINT settlements_attempt_key UNIQUE (chain_id, order_id, kind, attempt);

-- was UNIQUE (chain_id, executor, nonce): replacements reuse their first attempt's nonce, and no
-- two first attempts share one
ALTER TABLE settlements DROP CONSTRAINT settlements_chain_id_executor_nonce_key;
CREATE UNIQUE INDEX settlements_nonce_key ON settlements (chain_id, executor, nonce) WHERE attempt = 0;
