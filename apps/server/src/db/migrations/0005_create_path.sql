-- Cheaper order creation, same rules. Every order writes rows into orders, request_nonces,
-- fee_ledger and order_transitions; what each index, collation and CHECK costs there was measured
-- with perf on the Postgres backend and bench/ab.ts (BENCHMARKS.md, Orders API).

-- 1. Identifiers, hex addresses, API keys and nonces compare byte by byte. Under the database's
--    default collation (C.UTF-8 here, often en_US.UTF-8 in production) every b-tree comparison of
--    these columns went through strcoll; COLLATE "C" is memcmp, and the order it gives is the one
--    a byte string has anyway. Rule for new tables: identifier and hex columns are COLLATE "C".
ALTER TABLE merchants ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE api_keys ALTER COLUMN api_key TYPE text COLLATE "C", ALTER COLUMN merchant_id TYPE text COLLATE "C";
ALTER TABLE merchant_wallets ALTER COLUMN merchant_id TYPE text COLLATE "C", ALTER COLUMN token_symbol TYPE text COLLATE "C",
  ALTER COLUMN address TYPE text COLLATE "C";
ALTER TABLE request_nonces ALTER COLUMN api_key TYPE text COLLATE "C", ALTER COLUMN nonce TYPE text COLLATE "C";
ALTER TABLE fee_accounts ALTER COLUMN merchant_id TYPE text COLLATE "C";
ALTER TABLE fee_ledger ALTER COLUMN merchant_id TYPE text COLLATE "C", ALTER COLUMN order_id TYPE text COLLATE "C",
  ALTER COLUMN kind TYPE text COLLATE "C";
ALTER TABLE orders ALTER COLUMN id TYPE text COLLATE "C", ALTER COLUMN merchant_id TYPE text COLLATE "C",
  ALTER COLUMN dapp_order_id TYPE text COLLATE "C", ALTER COLUMN token_symbol TYPE text COLLATE "C",
  ALTER COLUMN token_contract TYPE text COLLATE "C", ALTER COLUMN from_address TYPE text COLLATE "C",
  ALTER COLUMN pay_to_address TYPE text COLLATE "C", ALTER COLUMN checkout_id TYPE text COLLATE "C";
ALTER TABLE order_transitions ALTER COLUMN order_id TYPE text COLLATE "C";
ALTER TABLE chain_transfers ALTER COLUMN order_id TYPE text COLLATE "C";
ALTER TABLE checkout_sessions ALTER COLUMN order_id TYPE text COLLATE "C";

-- 2. The address rule of orders without a regular expression: three regex matches per order were
--    9 % of the order statement's time. Same rule: exactly '0x' and 40 lowercase hex digits each.
ALTER TABLE orders DROP CONSTRAINT orders_addresses_lowercase;
ALTER TABLE orders ADD CONSTRAINT orders_addresses_lowercase CHECK (
  octet_length(from_address) = 42 AND octet_length(pay_to_address) = 42 AND octet_length(token_contract) = 42
  AND left(from_address, 2) = '0x' AND left(pay_to_address, 2) = '0x' AND left(token_contract, 2) = '0x'
  AND ltrim(substr(from_address, 3) || substr(pay_to_address, 3) || substr(token_contract, 3), '0123456789abcdef') = '');

-- 3. One index for live terms instead of two. The unique key of live orders now leads with the
--    columns the watcher looks orders up by (chain, pay-to, token, payer), so it also serves the
--    matching lookup and the loose index scan over pay-to addresses; `transfer_id IS NULL` is then
--    checked on the row (the orders that have a transfer and are still live are the few waiting for
--    confirmations). Uniqueness does not depend on column order: same rule as before.
DROP INDEX orders_live_match_idx;
DROP INDEX orders_live_terms_key;
CREATE UNIQUE INDEX orders_live_terms_key ON orders (chain_id, pay_to_address, token_contract, from_address, amount_wei)
  WHERE status = 'CHECKOUT_VERIFIED';

-- 4. Nonces are pruned by age (merchants/repo.ts pruneNonces) and inserted in time order: a BRIN
--    summary finds old pages as well as a b-tree did, and costs nothing per insert.
DROP INDEX request_nonces_seen_idx;
CREATE INDEX request_nonces_seen_brin ON request_nonces USING brin (seen_at);
