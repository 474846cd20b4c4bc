-- DELEGATE mode: merchants' callback registrations, the DELEGATE fields of an order, relayed
-- EIP-3009 authorizations, and a named lease per worker (the settlement executor of each chain).

-- A merchant's callback adapter on one chain (docs/delegate.md). Rows are never edited: a
-- new registration for the same chain closes the previous one (replaced_at), so an order keeps
-- pointing at the registration its signing request was issued for.
CREATE TABLE merchant_callbacks (
  id                 text COLLATE "C" PRIMARY KEY,
  merchant_id        text COLLATE "C" NOT NULL REFERENCES merchants (id),
  chain_id           integer NOT NULL,
  callback_contract  text COLLATE "C" NOT NULL CHECK (callback_contract ~ '^0x[0-9a-f]{40}$'),
  eip712_name        text NOT NULL CHECK (length(eip712_name) BETWEEN 1 AND 64),
  eip712_version     text NOT NULL CHECK (length(eip712_version) BETWEEN 1 AND 32),
  created_at         timestamptz NOT NULL DEFAULT now(),
  replaced_at        timestamptz
);
-- one active registration per merchant and chain
CREATE UNIQUE INDEX merchant_callbacks_active ON merchant_callbacks (merchant_id, chain_id) WHERE replaced_at IS NULL;

-- DELEGATE fields of an order (NULL for DIRECT orders: adding nullable columns rewrites nothing).
--   callback_id          the registration the order is settled to (NULL: plain transfer to the merchant wallet)
--   calldata_signature   the payer's EIP-712 signature of calldata_sign_request, once submitted
--   callback_status      pending | succeeded | failed (docs/delegate.md, status record fields)
--   settlement_tx_hash   the executor's settlement transaction; settled_at its finality
--   refund_tx_hash       the operator refund of a failed order's pooled funds
ALTER TABLE orders
  ADD COLUMN callback_id text COLLATE "C" REFERENCES merchant_callbacks (id),
  ADD COLUMN calldata_signature text,
  ADD COLUMN callback_status text CHECK (callback_status IN ('pending', 'succeeded', 'failed')),
  ADD COLUMN settlement_tx_hash text,
  ADD COLUMN settled_at timestamptz,
  ADD COLUMN refund_tx_hash text;

-- The settlement worker's scan: DELEGATE orders not yet settled, failed or refunded.
CREATE INDEX orders_delegate_open_idx ON orders (chain_id, status)
  WHERE flow IN ('ERC20_3009', 'ERC20_APPROVE_XFER') AND settlement_tx_hash IS NULL AND status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED');

-- The executor also relays payers' EIP-3009 authorizations (the payer pays no gas): same
-- record-before-send rule, kind 'relay'.
ALTER TABLE settlements DROP CONSTRAINT settlements_kind_check;
ALTER TABLE settlements ADD CONSTRAINT settlements_kind_check CHECK (kind IN ('settle', 'refund', 'relay'));

-- Leadership of named workers across processes (the settlement executor of chain N is
-- 'settlement:N'); the same conditional upsert as chain_leases (chain/evm/lease.ts).
CREATE TABLE worker_leases (
  name        text COLLATE "C" PRIMARY KEY,
  holder      text NOT NULL,
  expires_at  timestamptz NOT NULL
);
