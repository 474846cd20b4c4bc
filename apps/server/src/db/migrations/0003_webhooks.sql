-- Webhooks: merchant endpoints, the event outbox, deliveries (durable work rows) and attempts.
-- Same SQL on PGlite and PostgreSQL.

-- At most 5 enabled endpoints per merchant (service rule, under the merchant row lock). The secret
-- is AES-256-GCM ciphertext under MASTER_KEY with the endpoint id as AAD. During a rotation the
-- previous secret keeps signing until previous_secret_expires_at (see webhooks/signing.ts).
CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  merchant_id                 text NOT NULL REFERENCES merchants (id),
  url                         text NOT NULL,
  events                      text[] NOT NULL CHECK (cardinality(events) > 0),
  enabled                     boolean NOT NULL DEFAULT true,
  secret_ciphertext           text NOT NULL,
  previous_secret_ciphertext  text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_merchant_idx ON webhook_endpoints (merchant_id);

-- The outbox: one row per event, written in the transaction of the state change that caused it.
-- `payload` is `json`, not `jsonb`: json keeps the exact text, so the dispatcher splices it into
-- the envelope without parsing and re-serializing (and keys keep their order).
-- `txid` (the writing transaction) orders the `listen` feed: events become visible in commit order,
-- not in sequence order, so the feed only serves events of transactions older than every running
-- one (webhooks/repo.ts listEventsAfter) and pages by (txid, seq).
CREATE TABLE webhook_events (
  id           text PRIMARY KEY,
  seq          bigserial NOT NULL,
  txid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
  merchant_id  text NOT NULL REFERENCES merchants (id),
  event        text NOT NULL,
  payload      json NOT NULL,
  order_id     text,
  test         boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_events_feed_idx ON webhook_events (merchant_id, txid, seq);
CREATE INDEX webhook_events_order_idx ON webhook_events (order_id) WHERE order_id IS NOT NULL;

-- One row per (event, endpoint) send job: claimed with FOR UPDATE SKIP LOCKED, leased with
-- locked_by/locked_until, retried on the schedule of webhooks/schedule.ts.
-- status: pending (no attempt yet) | failed (last attempt failed, retry due at next_attempt_at)
--         | delivered | dead (schedule exhausted).
-- A redelivery of a delivered/dead row is a new row pointing at it (redelivery_of): the old row
-- and its attempts stay as history.
CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  event_id         text NOT NULL REFERENCES webhook_events (id),
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id),
  merchant_id      text NOT NULL REFERENCES merchants (id),
  event            text NOT NULL,
  order_id         text,
  redelivery_of    text REFERENCES webhook_deliveries (id),
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'failed', 'delivered', 'dead')),
  attempt_count    integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  locked_by        text,
  locked_until     timestamptz,
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL,
  CONSTRAINT webhook_deliveries_due_check CHECK ((status IN ('pending', 'failed')) = (next_attempt_at IS NOT NULL))
);
-- An event reaches an endpoint through one first delivery; redeliveries are extra rows.
CREATE UNIQUE INDEX webhook_deliveries_first_key ON webhook_deliveries (event_id, endpoint_id) WHERE redelivery_of IS NULL;
-- The claim query: due work in due order. A claim moves next_attempt_at to the lease end, so a
-- crashed dispatcher's rows become due again by this same index.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'failed');
-- Operator listings, newest first (status and event are filters on this range: a status index
-- would be rewritten by every status change, the hottest write of the table).
CREATE INDEX webhook_deliveries_merchant_idx ON webhook_deliveries (merchant_id, created_at DESC);
CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (order_id) WHERE order_id IS NOT NULL;
-- "Was this dead delivery already redelivered?" (bulk redelivery must not duplicate).
CREATE INDEX webhook_deliveries_redelivery_idx ON webhook_deliveries (redelivery_of) WHERE redelivery_of IS NOT NULL;

-- Every send: time, outcome and the first KiB of the response. (delivery_id, attempt) is unique:
-- one attempt number is sent once.
CREATE TABLE webhook_attempts (
  id             bigserial PRIMARY KEY,
  delivery_id    text NOT NULL REFERENCES webhook_deliveries (id),
  attempt        integer NOT NULL,
  attempted_at   timestamptz NOT NULL,
  status_code    integer,
  latency_ms     integer NOT NULL,
  error          text,
  -- the receiver answered with a 4xx other than 408/429: it refused the delivery (still retried)
  refused        boolean NOT NULL DEFAULT false,
  response_body  text,
  CONSTRAINT webhook_attempts_key UNIQUE (delivery_id, attempt)
);
