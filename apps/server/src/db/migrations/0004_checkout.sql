-- Hosted checkout sessions and their audit trail. Same SQL on PGlite and PostgreSQL.

-- A session binds server-authoritative terms to an opaque id (`cs_` + 24 random bytes, a bearer
-- capability). payment_options is the snapshot taken at creation: one entry per merchant wallet
-- with the price converted exactly into that token's smallest unit ({ chain_id, token_symbol,
-- token_contract, decimals, amount_wei }), so a later wallet or config change never re-prices a
-- session a payer is looking at. order_id is the order of the latest bind (orders.checkout_id
-- points back; a session may own several orders over time when one expires and the payer binds
-- again, but at most one live at a time).
CREATE TABLE checkout_sessions (
  id                   text PRIMARY KEY,
  merchant_id          text NOT NULL REFERENCES merchants (id),
  checkout_type        text NOT NULL CHECK (checkout_type IN ('DIRECT')),
  -- SIGNED is a compatibility value of the wire format; nothing produces it.
  status               text NOT NULL CHECK (status IN ('OPEN', 'BOUND', 'COMPLETED', 'EXPIRED', 'CANCELLED', 'FAILED', 'SIGNED')),
  payment_rails        jsonb NOT NULL,
  -- decimal strings exactly as the merchant sent them (validated by checkout/validate.ts)
  price                text,
  fiat_currency        text,
  fiat_amount          text,
  client_reference_id  text,
  line_items           jsonb NOT NULL DEFAULT '[]'::jsonb,
  public_metadata      jsonb NOT NULL DEFAULT '{}'::jsonb,
  private_metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
  success_url          text,
  cancel_url           text,
  payment_options      jsonb NOT NULL DEFAULT '[]'::jsonb,
  order_id             text REFERENCES orders (id),
  expires_at           timestamptz NOT NULL,
  completed_at         timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT checkout_sessions_crypto_price CHECK ((price IS NULL) = NOT (payment_rails ? 'crypto')),
  CONSTRAINT checkout_sessions_fiat_terms CHECK ((fiat_currency IS NULL) = (fiat_amount IS NULL))
);

-- A non-empty client_reference_id is unique per merchant (interface: a reuse is 409 and does not
-- return the original). Empty references are stored as NULL and never collide.
CREATE UNIQUE INDEX checkout_sessions_client_reference_key ON checkout_sessions (merchant_id, client_reference_id)
  WHERE client_reference_id IS NOT NULL;
-- The session sweeper: open and bound sessions in expiry order.
CREATE INDEX checkout_sessions_expiry_idx ON checkout_sessions (expires_at) WHERE status IN ('OPEN', 'BOUND');

-- The orders of a session (bind looks up the latest; the status projection reads it).
CREATE INDEX orders_checkout_idx ON orders (checkout_id, created_at) WHERE checkout_id IS NOT NULL;

-- Audit trail: one row per session move, with the order that caused or carried it.
CREATE TABLE checkout_transitions (
  id           bigserial PRIMARY KEY,
  checkout_id  text NOT NULL REFERENCES checkout_sessions (id),
  from_status  text,
  to_status    text NOT NULL,
  trigger      text NOT NULL,
  order_id     text,
  detail       jsonb,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkout_transitions_checkout_idx ON checkout_transitions (checkout_id);
-- A session completes once: a second COMPLETED row (and a second quickpay.checkout.completed event
-- in the same transaction) is impossible even if two order transitions raced.
CREATE UNIQUE INDEX checkout_transitions_completed_once ON checkout_transitions (checkout_id) WHERE to_status = 'COMPLETED';
