-- Machine payments (/mpp/v1): merchant route prices, issued challenges, the claim of each on-chain
-- transfer, and the receipt signing keys.

-- The price of one machine-paid route of a merchant. `version` increments on every change and is
-- copied into each challenge, so a receipt names the price it was issued under.
CREATE TABLE mpp_routes (
  merchant_id     text COLLATE "C" NOT NULL REFERENCES merchants (id),
  route_canonical text COLLATE "C" NOT NULL,
  chain_id        integer NOT NULL,
  token_symbol    text NOT NULL,
  token_contract  text NOT NULL,
  amount_wei      numeric(78,0) NOT NULL CHECK (amount_wei > 0),
  recipient       text NOT NULL,
  version         integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, route_canonical),
  CONSTRAINT mpp_routes_addresses_lowercase CHECK (
    left(token_contract, 2) = '0x' AND length(token_contract) = 42 AND token_contract = lower(token_contract)
    AND left(recipient, 2) = '0x' AND length(recipient) = 42 AND recipient = lower(recipient))
);

-- One issued challenge. The id carries its own MAC and expiry (checked without a read); the row
-- holds the terms and is consumed once: status OPEN → PAID with the claiming transfer and the
-- signed receipt (repeats of verify return that receipt).
CREATE TABLE mpp_challenges (
  id                    text COLLATE "C" PRIMARY KEY,
  merchant_id           text COLLATE "C" NOT NULL REFERENCES merchants (id),
  route_canonical       text COLLATE "C" NOT NULL,
  request_canonical     text NOT NULL,
  payer_addr            text NOT NULL,
  chain_id              integer NOT NULL,
  token_contract        text NOT NULL,
  recipient             text NOT NULL,
  amount_wei            numeric(78,0) NOT NULL CHECK (amount_wei > 0),
  route_pricing_version integer NOT NULL,
  mac                   text NOT NULL,
  issued_at             timestamptz NOT NULL,
  expires_at            timestamptz NOT NULL,
  status                text NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'PAID')),
  tx_hash               text COLLATE "C",
  log_index             integer,
  block_number          bigint,
  paid_amount_wei       numeric(78,0),
  receipt_jws           text,
  paid_at               timestamptz,
  CONSTRAINT mpp_challenges_paid_complete CHECK (
    status = 'OPEN' OR (tx_hash IS NOT NULL AND log_index IS NOT NULL AND receipt_jws IS NOT NULL AND paid_at IS NOT NULL))
);
-- The merchant's list of machine payments, newest first.
CREATE INDEX mpp_challenges_paid_idx ON mpp_challenges (merchant_id, paid_at DESC) WHERE status = 'PAID';
-- Expired open challenges are pruned by age.
CREATE INDEX mpp_challenges_expiry_idx ON mpp_challenges (expires_at) WHERE status = 'OPEN';

-- Each on-chain transfer (chain, tx, log index) pays at most one challenge: the primary key is the
-- claim, so two verifies racing in different processes cannot both win.
CREATE TABLE mpp_claims (
  chain_id     integer NOT NULL,
  tx_hash      text COLLATE "C" NOT NULL,
  log_index    integer NOT NULL,
  challenge_id text COLLATE "C" NOT NULL UNIQUE REFERENCES mpp_challenges (id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, tx_hash, log_index)
);

-- Ed25519 receipt signing keys. The private key is AES-GCM encrypted under MASTER_KEY (bound to
-- its kid); exactly one key is active; retired keys stay published so old receipts still verify.
CREATE TABLE mpp_receipt_keys (
  kid                text COLLATE "C" PRIMARY KEY,
  private_ciphertext text NOT NULL,
  public_jwk         jsonb NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  retired_at         timestamptz
);
CREATE UNIQUE INDEX mpp_receipt_keys_one_active ON mpp_receipt_keys ((true)) WHERE retired_at IS NULL;
