-- Card rail (rails/card): orders of flow FIAT_<PROCESSOR>.
--
-- A card order is a row of `orders` like any other (status record, transitions, fee ledger,
-- webhooks, checkout sync all apply unchanged). It has no chain: chain_id and pay_to_chain_id are
-- 0, token_contract and pay_to_address the zero address, token_symbol the fiat currency, decimals
-- its minor units, amount_wei the amount in minor units. from_address is an opaque per-order value
-- (derived from the order id) so that orders_live_terms_key, which spans live orders' terms, never
-- makes two card orders of the same amount collide; it is not a wallet.
--
-- What the merchant sees of the card payment lives on the order (it is in the status record and
-- in every order event payload):
ALTER TABLE orders
  ADD COLUMN fiat_currency     text,
  ADD COLUMN fiat_amount       text,
  -- the processor's payment reference (TEST: tpi_…, STRIPE: the PaymentIntent id pi_…)
  ADD COLUMN payment_reference text COLLATE "C",
  -- why a paid card order is parked in PAYMENT_CONFIRMED: a JSON array of
  -- duplicate_payment | conflict | refund | dispute | balance; NULL or [] = nothing holds it
  ADD COLUMN held_reasons      jsonb,
  -- minor units refunded so far (succeeded refunds)
  ADD COLUMN refunded_amount   numeric(78,0),
  -- latest dispute status: opened | won | lost
  ADD COLUMN dispute_status    text;

-- Processor-side state of a card order's payment, one row per order. `state` only moves forward
-- by rank (pending 0 < processing 1 < declined 1 < succeeded 2 < refunded 3): a late
-- payment_intent.succeeded can never undo a refund (services compare ranks, see rails/card/states.ts).
CREATE TABLE card_payments (
  order_id          text COLLATE "C" PRIMARY KEY REFERENCES orders (id),
  merchant_id       text COLLATE "C" NOT NULL,
  processor         text NOT NULL,
  state             text NOT NULL CHECK (state IN ('pending', 'processing', 'declined', 'succeeded', 'refunded')),
  payment_reference text COLLATE "C",
  -- the processor's hosted page / redirect for this payment (STRIPE: Checkout Session URL)
  redirect_url      text,
  decline_code      text,
  -- the processor's id of the first successful charge (a success with another charge id is a duplicate payment)
  charge_id         text,
  -- successful charges reported for this order (a second one is a duplicate payment)
  charges           integer NOT NULL DEFAULT 0,
  attempts          integer NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX card_payments_reference_key ON card_payments (processor, payment_reference) WHERE payment_reference IS NOT NULL;
-- the card expiry sweep: live card orders past expiry
CREATE INDEX card_payments_live_idx ON card_payments (state) WHERE state IN ('pending', 'declined');

-- Every processor notification applied, by the processor's event id: a redelivered or replayed
-- event is recognised here and applied at most once.
CREATE TABLE card_events (
  processor   text NOT NULL,
  event_id    text COLLATE "C" NOT NULL,
  type        text NOT NULL,
  order_id    text COLLATE "C",
  outcome     text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (processor, event_id)
);

-- Refunds of card orders (merchant API, operator, or reported by the processor).
CREATE TABLE card_refunds (
  id                  text COLLATE "C" PRIMARY KEY,
  order_id            text COLLATE "C" NOT NULL REFERENCES orders (id),
  merchant_id         text COLLATE "C" NOT NULL,
  amount              numeric(78,0) NOT NULL CHECK (amount > 0),
  status              text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  processor_refund_id text COLLATE "C",
  reason              text,
  requested_by        text NOT NULL CHECK (requested_by IN ('merchant', 'operator', 'processor')),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_refunds_order_idx ON card_refunds (order_id);
CREATE UNIQUE INDEX card_refunds_processor_key ON card_refunds (processor_refund_id) WHERE processor_refund_id IS NOT NULL;

-- Reconciliation cursor per processor (STRIPE: the id of the newest event seen through the events list).
CREATE TABLE card_cursors (
  processor  text PRIMARY KEY,
  cursor     text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
