-- The schema of orders-related indexes, collations and CHECKs as they were before migration 0005,
-- for bench/ab.ts: A_SQL="$(cat bench/before-0005.sql)" npx tsx bench/ab.ts (BENCHMARKS.md, Orders API).
ALTER TABLE merchants ALTER COLUMN id TYPE text COLLATE "default";
ALTER TABLE api_keys ALTER COLUMN api_key TYPE text COLLATE "default", ALTER COLUMN merchant_id TYPE text COLLATE "default";
ALTER TABLE merchant_wallets ALTER COLUMN merchant_id TYPE text COLLATE "default", ALTER COLUMN token_symbol TYPE text COLLATE "default", ALTER COLUMN address TYPE text COLLATE "default";
ALTER TABLE request_nonces ALTER COLUMN api_key TYPE text COLLATE "default", ALTER COLUMN nonce TYPE text COLLATE "default";
ALTER TABLE fee_accounts ALTER COLUMN merchant_id TYPE text COLLATE "default";
ALTER TABLE fee_ledger ALTER COLUMN merchant_id TYPE text COLLATE "default", ALTER COLUMN order_id TYPE text COLLATE "default", ALTER COLUMN kind TYPE text COLLATE "default";
ALTER TABLE orders ALTER COLUMN id TYPE text COLLATE "default", ALTER COLUMN merchant_id TYPE text COLLATE "default", ALTER COLUMN dapp_order_id TYPE text COLLATE "default", ALTER COLUMN token_symbol TYPE text COLLATE "default", ALTER COLUMN token_contract TYPE text COLLATE "default", ALTER COLUMN from_address TYPE text COLLATE "default", ALTER COLUMN pay_to_address TYPE text COLLATE "default", ALTER COLUMN checkout_id TYPE text COLLATE "default";
ALTER TABLE order_transitions ALTER COLUMN order_id TYPE text COLLATE "default";
ALTER TABLE chain_transfers ALTER COLUMN order_id TYPE text COLLATE "default";
ALTER TABLE checkout_sessions ALTER COLUMN order_id TYPE text COLLATE "default";
ALTER TABLE orders DROP CONSTRAINT orders_addresses_lowercase;
ALTER TABLE orders ADD CONSTRAINT orders_addresses_lowercase CHECK (from_address ~ '^0x[0-9a-f]{40}$' AND pay_to_address ~ '^0x[0-9a-f]{40}$' AND token_contract ~ '^0x[0-9a-f]{40}$');
DROP INDEX orders_live_terms_key;
CREATE UNIQUE INDEX orders_live_terms_key ON orders (chain_id, token_contract, pay_to_address, from_address, amount_wei) WHERE status = 'CHECKOUT_VERIFIED';
CREATE INDEX orders_live_match_idx ON orders (chain_id, pay_to_address, token_contract, from_address) WHERE status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL;
DROP INDEX request_nonces_seen_brin;
CREATE INDEX request_nonces_seen_idx ON request_nonces (seen_at);
