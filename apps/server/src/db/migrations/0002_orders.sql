-- Orders (DIRECT mode first), their audit trail, observed chain transfers and watcher cursors.

CREATE TABLE orders (
  id               text PRIMARY KEY,
  merchant_id      text NOT NULL REFERENCES merchants (id),
  dapp_order_id    text NOT NULL,
  flow             text NOT NULL,
  chain_id         integer NOT NULL,
  pay_to_chain_id  integer NOT NULL,
  token_symbol     text NOT NULL,
  token_contract   text NOT NULL,
  decimals         integer NOT NULL,
  from_address     text NOT NULL,
  pay_to_address   text NOT NULL,
  amount_wei       numeric(78,0) NOT NULL CHECK (amount_wei > 0),
  fee_amount       numeric(78,0) NOT NULL CHECK (fee_amount >= 0),
  status           text NOT NULL CHECK (status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'INVOICED', 'FAILED', 'EXPIRED', 'CANCELLED')),
  expires_at       timestamptz NOT NULL,
  callback_calldata text,
  checkout_id      text,
  -- the transfer that pays the order (set when seen, cleared if a reorg orphans it)
  transfer_id      bigint,
  tx_hash          text,
  log_index        integer,
  block_number     bigint,
  block_hash       text,
  paid_amount_wei  numeric(78,0),
  confirmations    integer,
  payment_seen_at  timestamptz,
  confirmed_at     timestamptz,
  invoiced_at      timestamptz,
  failure_reason   text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT orders_dapp_order_id_key UNIQUE (merchant_id, dapp_order_id),
  -- The watcher matches logs by exact string equality (index lookups), and decodes log addresses
  -- to lowercase: a checksummed address here would never match, silently. Same rule as
  -- merchant_wallets.address.
  CONSTRAINT orders_addresses_lowercase CHECK (
    from_address ~ '^0x[0-9a-f]{40}$' AND pay_to_address ~ '^0x[0-9a-f]{40}$' AND token_contract ~ '^0x[0-9a-f]{40}$')
);

-- A transfer must be attributable to exactly one live order: no two live orders may share payer,
-- pay-to address, token and amount (interface: 409 for the second one).
CREATE UNIQUE INDEX orders_live_terms_key ON orders (chain_id, token_contract, pay_to_address, from_address, amount_wei)
  WHERE status = 'CHECKOUT_VERIFIED';
-- Matching a transfer to live orders is an index lookup whatever the number of live orders.
-- pay_to_address second: the watcher also walks the distinct pay-to addresses of live orders with a
-- loose index scan (one probe per address, not one row per order).
CREATE INDEX orders_live_match_idx ON orders (chain_id, pay_to_address, token_contract, from_address)
  WHERE status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL;
-- Orders with a payment waiting for depth (confirmation / finality pass).
CREATE INDEX orders_pending_depth_idx ON orders (chain_id) WHERE transfer_id IS NOT NULL AND status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED');
-- Expiry sweep.
CREATE INDEX orders_expiry_idx ON orders (expires_at) WHERE status = 'CHECKOUT_VERIFIED';
-- Late payments: a transfer with no live match is recorded against a recently closed order of the
-- same payer and pay-to address (watcher matching rule 5).
CREATE INDEX orders_closed_match_idx ON orders (chain_id, token_contract, pay_to_address, from_address, created_at)
  WHERE status IN ('EXPIRED', 'CANCELLED');

-- Audit trail: one row per state move. INVOICED is reachable once per order, enforced here.
CREATE TABLE order_transitions (
  id           bigserial PRIMARY KEY,
  order_id     text NOT NULL REFERENCES orders (id),
  from_status  text,
  to_status    text NOT NULL,
  trigger      text NOT NULL,
  detail       jsonb,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_transitions_order_idx ON order_transitions (order_id);
CREATE UNIQUE INDEX order_transitions_invoiced_once ON order_transitions (order_id) WHERE to_status = 'INVOICED';

-- Every ERC-20 Transfer to a merchant wallet that the watcher saw, with its block hash. A reorg
-- sets orphaned_at; the same log re-mined in another block is a new row.
CREATE TABLE chain_transfers (
  id              bigserial PRIMARY KEY,
  chain_id        integer NOT NULL,
  token_contract  text NOT NULL,
  tx_hash         text NOT NULL,
  log_index       integer NOT NULL,
  block_number    bigint NOT NULL,
  block_hash      text NOT NULL,
  -- the block's timestamp: decides whether the payment was late (block time > expires_at)
  block_timestamp timestamptz,
  from_address    text NOT NULL,
  to_address      text NOT NULL,
  amount_wei      numeric(78,0) NOT NULL,
  -- outcome of matching: matched (pays order_id), underpaid / late (recorded against order_id,
  -- never confirms it), unmatched (no order)
  match_status    text NOT NULL CHECK (match_status IN ('matched', 'underpaid', 'late', 'unmatched')),
  order_id        text REFERENCES orders (id),
  orphaned_at     timestamptz,
  seen_at         timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT chain_transfers_log_key UNIQUE (chain_id, tx_hash, log_index, block_hash)
);
CREATE INDEX chain_transfers_order_idx ON chain_transfers (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX chain_transfers_block_idx ON chain_transfers (chain_id, block_number) WHERE orphaned_at IS NULL;

-- Watcher cursor per chain: the last block fully scanned and its hash (reorg detection).
-- block_timestamp is how far chain time has been scanned: a payment in a block up to it has been
-- seen (the expiry sweeper can use it so a lagging watcher does not expire paid orders).
-- genesis_hash identifies the chain itself: a dev chain restarted under a kept database (npm start
-- with a persistent DATA_DIR) has the same chain id but a new genesis, and must be rescanned.
CREATE TABLE chain_cursors (
  chain_id         integer PRIMARY KEY,
  block_number     bigint NOT NULL,
  block_hash       text NOT NULL,
  block_timestamp  timestamptz,
  genesis_hash     text,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One watcher leader per chain across processes sharing the database: a lease renewed every poll;
-- another process takes over when it lapses (no session-bound advisory lock, so it works the same
-- on PGlite and through a pooled Postgres).
CREATE TABLE chain_leases (
  chain_id    integer PRIMARY KEY,
  holder      text NOT NULL,
  expires_at  timestamptz NOT NULL
);
