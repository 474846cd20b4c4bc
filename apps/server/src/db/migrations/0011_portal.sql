-- Merchant portal (docs/portal.md): users, sessions, invitations, login throttling, and the indexes
-- of the orders list. Same SQL on PGlite and PostgreSQL.
-- (Numbered 0011 at its merge into main.)

-- A portal user belongs to exactly one merchant; the email (lowercased) signs in, so it is unique
-- across merchants. password_hash is scrypt in the PHC-like form of portal/passwords.ts.
CREATE TABLE portal_users (
  id             text COLLATE "C" PRIMARY KEY,
  merchant_id    text COLLATE "C" NOT NULL REFERENCES merchants (id),
  email          text COLLATE "C" NOT NULL,
  password_hash  text NOT NULL,
  role           text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  created_at     timestamptz NOT NULL DEFAULT now(),
  disabled_at    timestamptz
);
CREATE UNIQUE INDEX portal_users_email_key ON portal_users (email);
CREATE INDEX portal_users_merchant_idx ON portal_users (merchant_id);

-- A signed-in browser. The cookie holds a random 256-bit id; only its SHA-256 is stored, so a
-- database read does not hand out live sessions. The operator's session has no user and carries
-- the merchant it currently looks at (NULL until it picks one). csrf_token is the synchronizer
-- token every unsafe request must echo in X-CSRF-Token.
CREATE TABLE portal_sessions (
  id_hash      text COLLATE "C" PRIMARY KEY,
  user_id      text COLLATE "C" REFERENCES portal_users (id),
  merchant_id  text COLLATE "C" REFERENCES merchants (id),
  role         text NOT NULL CHECK (role IN ('operator', 'owner', 'developer', 'viewer')),
  csrf_token   text COLLATE "C" NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  CONSTRAINT portal_sessions_owner_check CHECK ((role = 'operator') = (user_id IS NULL))
);
CREATE INDEX portal_sessions_user_idx ON portal_sessions (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX portal_sessions_expiry_idx ON portal_sessions (expires_at);

-- Single-use invitation links; only the SHA-256 of the token is stored.
CREATE TABLE portal_invitations (
  token_hash   text COLLATE "C" PRIMARY KEY,
  merchant_id  text COLLATE "C" NOT NULL REFERENCES merchants (id),
  email        text COLLATE "C" NOT NULL,
  role         text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  invited_by   text COLLATE "C",
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz
);
CREATE INDEX portal_invitations_merchant_idx ON portal_invitations (merchant_id);

-- Failed sign-ins per key ('acct:<email>' or 'ip:<address>') in a fixed window; shared by every API
-- process on the database, so a balancer spreading guesses over processes gains nothing.
CREATE TABLE portal_login_failures (
  key           text COLLATE "C" PRIMARY KEY,
  failures      integer NOT NULL,
  window_start  timestamptz NOT NULL
);

-- The orders list of one merchant, newest first, paged by (created_at, id): one index range per
-- page whatever the number of orders. Paid on every order creation: measured with bench/ab.ts
-- (BENCHMARKS.md, Merchant portal).
CREATE INDEX orders_merchant_created_idx ON orders (merchant_id, created_at DESC, id DESC);
-- Search by payer within a merchant.
CREATE INDEX orders_merchant_payer_idx ON orders (merchant_id, from_address, created_at DESC);
-- Search by transaction hash: partial, so creating an order (no tx yet) writes nothing here.
CREATE INDEX orders_tx_hash_idx ON orders (tx_hash) WHERE tx_hash IS NOT NULL;

-- The checkout sessions page of one merchant, newest first (paid when a session is created, not
-- on the order path).
CREATE INDEX checkout_sessions_merchant_created_idx ON checkout_sessions (merchant_id, created_at DESC, id DESC);
