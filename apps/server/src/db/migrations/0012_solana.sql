-- Solana (docs/solana.md): SOL_DIRECT orders store base58 keys where EVM orders store 0x hex.
-- pay_to_address of a SOL_DIRECT order is the merchant's WALLET (the Solana Pay recipient); the
-- token account it is paid into is derived from it (associated token account of the mint).

-- 1. Orders: the hex rule of 0005 stays for every non-Solana flow; a SOL_ flow carries base58 keys
--    (32 bytes: 32 to 44 characters). Same cost for EVM rows: the first test is one comparison.
ALTER TABLE orders DROP CONSTRAINT orders_addresses_lowercase;
ALTER TABLE orders ADD CONSTRAINT orders_addresses_lowercase CHECK (
  CASE WHEN left(flow, 4) = 'SOL_' THEN
    octet_length(from_address) BETWEEN 32 AND 44 AND octet_length(pay_to_address) BETWEEN 32 AND 44
    AND octet_length(token_contract) BETWEEN 32 AND 44
    AND ltrim(from_address || pay_to_address || token_contract, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz') = ''
  ELSE
    octet_length(from_address) = 42 AND octet_length(pay_to_address) = 42 AND octet_length(token_contract) = 42
    AND left(from_address, 2) = '0x' AND left(pay_to_address, 2) = '0x' AND left(token_contract, 2) = '0x'
    AND ltrim(substr(from_address, 3) || substr(pay_to_address, 3) || substr(token_contract, 3), '0123456789abcdef') = ''
  END);

-- 2. Merchant wallets: a lowercase 0x address (EVM) or a base58 public key (Solana); the service
--    checks which one the wallet's chain takes.
ALTER TABLE merchant_wallets DROP CONSTRAINT merchant_wallets_address_check;
ALTER TABLE merchant_wallets ADD CONSTRAINT merchant_wallets_address_check CHECK (
  address ~ '^0x[0-9a-f]{40}$' OR address ~ '^[1-9A-HJ-NP-Za-km-z]{32,44}$');

-- 3. The Solana watcher's cursor per followed address (a reference key or a merchant token
--    account): the newest signature handled. Catch-up after downtime pages back to it.
CREATE TABLE solana_cursors (
  chain_id    integer NOT NULL,
  address     text COLLATE "C" NOT NULL,
  signature   text COLLATE "C" NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, address)
);
