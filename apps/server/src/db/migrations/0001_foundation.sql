-- Foundation: merchants, their API keys and receiving wallets, request nonces, fee ledger.
-- Same SQL on PGlite and PostgreSQL. Money is numeric(78,0) in the smallest unit.

CREATE TABLE merchants (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  receive_type  text NOT NULL DEFAULT 'DIRECT' CHECK (receive_type IN ('DIRECT', 'DELEGATE')),
  logo_url      text,
  return_urls   jsonb NOT NULL DEFAULT '[]'::jsonb,
  card_enabled  boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- The secret is AES-256-GCM ciphertext under MASTER_KEY ("v1:<iv>:<tag>:<ct>", base64 parts).
CREATE TABLE api_keys (
  api_key           text PRIMARY KEY,
  merchant_id       text NOT NULL REFERENCES merchants (id),
  secret_ciphertext text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  revoked_at        timestamptz
);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id);

CREATE TABLE merchant_wallets (
  merchant_id   text NOT NULL REFERENCES merchants (id),
  chain_id      integer NOT NULL,
  token_symbol  text NOT NULL,
  address       text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, chain_id, token_symbol)
);

-- Every accepted merchant request consumes its nonce here; the primary key makes a replay
-- impossible across restarts and across processes sharing one database.
CREATE TABLE request_nonces (
  api_key  text NOT NULL,
  nonce    text NOT NULL,
  seen_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (api_key, nonce)
);
CREATE INDEX request_nonces_seen_idx ON request_nonces (seen_at);

-- Fee balances, materialized per merchant; the CHECKs make overdrawing impossible even under
-- concurrent reservations. Every change is also one double-entry row in fee_ledger.
CREATE TABLE fee_accounts (
  merchant_id  text PRIMARY KEY REFERENCES merchants (id),
  available    numeric(78,0) NOT NULL DEFAULT 0 CHECK (available >= 0),
  reserved     numeric(78,0) NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  captured     numeric(78,0) NOT NULL DEFAULT 0 CHECK (captured >= 0)
);

-- Each row moves `amount` from from_account to to_account. Accounts: 'external' (top-ups), 'available', 'reserved', 'captured'
-- (operator revenue). top_up: external→available; reserve: available→reserved;
-- capture: reserved→captured; release: reserved→available.
CREATE TABLE fee_ledger (
  id             bigserial PRIMARY KEY,
  merchant_id    text NOT NULL REFERENCES merchants (id),
  kind           text NOT NULL CHECK (kind IN ('top_up', 'reserve', 'capture', 'release')),
  from_account   text NOT NULL CHECK (from_account IN ('external', 'available', 'reserved', 'captured')),
  to_account     text NOT NULL CHECK (to_account IN ('external', 'available', 'reserved', 'captured')),
  amount         numeric(78,0) NOT NULL CHECK (amount > 0),
  order_id       text,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fee_ledger_merchant_idx ON fee_ledger (merchant_id);
-- An order reserves, captures and releases at most once each.
CREATE UNIQUE INDEX fee_ledger_order_kind_idx ON fee_ledger (order_id, kind) WHERE order_id IS NOT NULL;
