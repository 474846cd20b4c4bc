-- The x402 facilitator asks, for every verify and settle, whether a pay-to address is a receiving
-- wallet of some merchant on that chain (x402/scope.ts); the primary key (merchant_id, chain_id,
-- token_symbol) cannot answer that without reading every wallet.
CREATE INDEX merchant_wallets_chain_address_idx ON merchant_wallets (chain_id, address);
