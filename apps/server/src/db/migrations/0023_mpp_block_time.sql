-- The time of the block that paid a machine-payment challenge: GOAT's receipt format
-- (docs/machine-payments.md, "GOAT's wire") signs it, and a repeated verify re-creates that
-- receipt from the stored row. Rows paid before this column have none; their receipt states the
-- time the payment was recorded instead (paid_at, at most seconds after the block).
ALTER TABLE mpp_challenges ADD COLUMN block_time timestamptz;
