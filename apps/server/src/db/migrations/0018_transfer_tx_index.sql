-- A machine-payment verify reads the watcher's transfers of ONE transaction (mpp/indexed.ts:
-- chain_id and tx_hash, live rows only). chain_transfers_log_key (chain_id, tx_hash, …) serves
-- that, but right after a burst of inserts, before autovacuum's ANALYZE, the planner saw both it
-- and chain_transfers_block_idx (chain_id, block_number, same partial predicate) as one-row scans
-- of equal cost and took the block index: a walk over every live transfer of the chain per
-- verify (measured 0.33 ms at 2,000 rows, 0.06 ms with the right index; linear in the chain's
-- history). An index whose columns are exactly the equality predicate is the cheaper plan whatever
-- the statistics say.
CREATE INDEX chain_transfers_tx_idx ON chain_transfers (chain_id, tx_hash) WHERE orphaned_at IS NULL;
