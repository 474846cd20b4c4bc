-- x402 v2 facilitator: one claim per EIP-3009 authorization (chain, token, payer, nonce) the
-- gateway settles. The claim is written by the same statement as the executor's row in
-- `settlements` (kind 'x402', order_id = the claim id), before anything is broadcast: concurrent
-- or repeated settles of one authorization, in any process, lead to at most one transaction.
CREATE TABLE x402_authorizations (
  id            text COLLATE "C" PRIMARY KEY,
  chain_id      integer NOT NULL,
  token         text COLLATE "C" NOT NULL CHECK (token ~ '^0x[0-9a-f]{40}$'),
  payer         text COLLATE "C" NOT NULL CHECK (payer ~ '^0x[0-9a-f]{40}$'),
  nonce         text COLLATE "C" NOT NULL CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
  recipient     text COLLATE "C" NOT NULL CHECK (recipient ~ '^0x[0-9a-f]{40}$'),
  amount        numeric(78, 0) NOT NULL CHECK (amount >= 0),
  valid_before  bigint NOT NULL,
  -- the payer's signature as submitted: a repeat of the same payload finds its claim; another
  -- signature for the same nonce is a different payload and is refused
  signature     text COLLATE "C" NOT NULL CHECK (signature ~ '^0x[0-9a-f]+$'),
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chain_id, token, payer, nonce)
);

-- The executor sends x402 settlements too (token.transferWithAuthorization): kind 'x402', beside
-- DELEGATE's settle, refund and relay.
ALTER TABLE settlements DROP CONSTRAINT settlements_kind_check;
ALTER TABLE settlements ADD CONSTRAINT settlements_kind_check CHECK (kind IN ('settle', 'refund', 'relay', 'x402'));
