-- Hosted quick-pay (issue 18): products, payment links and quick-pay sessions. Same SQL on PGlite
-- and PostgreSQL.

-- A product: a server-owned price. `price` is a decimal string in stablecoin units, converted
-- exactly into each token's smallest unit when a session is opened (never a float); the fiat pair
-- is kept for the card rail. `inventory` (units, NULL = unlimited) is shared by every link that
-- sells the product: a paid or still payable session holds one unit.
CREATE TABLE quickpay_products (
  id            text COLLATE "C" PRIMARY KEY,
  merchant_id   text COLLATE "C" NOT NULL REFERENCES merchants (id),
  name          text NOT NULL,
  description   text,
  image_url     text,
  price         text,
  fiat_currency text,
  fiat_amount   text,
  inventory     integer CHECK (inventory IS NULL OR inventory >= 0),
  active        boolean NOT NULL DEFAULT true,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT quickpay_products_some_price CHECK (price IS NOT NULL OR fiat_amount IS NOT NULL),
  CONSTRAINT quickpay_products_fiat_pair CHECK ((fiat_currency IS NULL) = (fiat_amount IS NULL))
);
CREATE INDEX quickpay_products_merchant_idx ON quickpay_products (merchant_id, created_at);

-- A payment link sells one product (product_id) or takes any amount between min_amount and
-- max_amount (decimal strings, product_id NULL). `payment_rails` is a JSON array ('crypto', later
-- 'card'); `options` the allowed (chain_id, token_symbol) pairs, [] = every merchant wallet.
-- `max_payments` bounds the sessions that are paid or still payable (NULL = unlimited).
CREATE TABLE quickpay_links (
  id            text COLLATE "C" PRIMARY KEY,
  merchant_id   text COLLATE "C" NOT NULL REFERENCES merchants (id),
  product_id    text COLLATE "C" REFERENCES quickpay_products (id),
  min_amount    text,
  max_amount    text,
  payment_rails jsonb NOT NULL,
  options       jsonb NOT NULL DEFAULT '[]'::jsonb,
  max_payments  integer CHECK (max_payments IS NULL OR max_payments > 0),
  expires_at    timestamptz,
  active        boolean NOT NULL DEFAULT true,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT quickpay_links_kind CHECK ((product_id IS NULL) = (min_amount IS NOT NULL AND max_amount IS NOT NULL))
);
CREATE INDEX quickpay_links_merchant_idx ON quickpay_links (merchant_id, created_at);

-- A quick-pay session (`qps_`): one payer's attempt on a link, on one rail. A crypto session owns
-- one DIRECT order (order_id; the order's dapp_order_id is `quickpay:<session id>`), a card session
-- will own a checkout session (checkout_id). `amount` is the decimal amount the payer pays (the
-- product price, or the amount chosen on an any-amount link); `memo` the payer's reference.
-- An idempotency key is unique per link: a double click returns the first session.
CREATE TABLE quickpay_sessions (
  id              text COLLATE "C" PRIMARY KEY,
  link_id         text COLLATE "C" NOT NULL REFERENCES quickpay_links (id),
  merchant_id     text COLLATE "C" NOT NULL REFERENCES merchants (id),
  product_id      text COLLATE "C" REFERENCES quickpay_products (id),
  rail            text NOT NULL CHECK (rail IN ('crypto', 'card')),
  amount          text NOT NULL,
  memo            text,
  idempotency_key text COLLATE "C",
  request_hash    text COLLATE "C" NOT NULL,
  chain_id        integer,
  token_symbol    text,
  from_address    text COLLATE "C",
  order_id        text COLLATE "C" REFERENCES orders (id),
  checkout_id     text COLLATE "C",
  expires_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX quickpay_sessions_idempotency_key ON quickpay_sessions (link_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX quickpay_sessions_order_key ON quickpay_sessions (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX quickpay_sessions_link_idx ON quickpay_sessions (link_id, created_at);
CREATE INDEX quickpay_sessions_product_idx ON quickpay_sessions (product_id) WHERE product_id IS NOT NULL;
-- The partial-payment worker reads the sessions that are not completed yet (recent ones).
CREATE INDEX quickpay_sessions_open_idx ON quickpay_sessions (created_at) WHERE completed_at IS NULL;
