-- Attribution that never credits the wrong order (docs/attribution.md).

-- 1. Per-merchant under-payment tolerance, in basis points of the order amount (0–1000, i.e. at
--    most 10 %). A transfer short of an order by no more than this counts as paying it. Default 0:
--    exact or more, as before.
ALTER TABLE merchants ADD COLUMN underpay_tolerance_bps integer NOT NULL DEFAULT 0
  CONSTRAINT merchants_underpay_tolerance_bps_check CHECK (underpay_tolerance_bps BETWEEN 0 AND 1000);

-- 2. A transfer with exactly the terms of an order that is already paid is a duplicate payment:
--    recorded against that order (never against another one), never paying anything.
ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_match_status_check;
ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_match_status_check
  CHECK (match_status IN ('matched', 'underpaid', 'late', 'duplicate', 'unmatched'));

-- 3. A late or under-payment the merchant accepted (POST /api/v1/orders/{id}/accept-payment): the
--    order is then INVOICED by this transfer. The match status stays what the watcher decided.
ALTER TABLE chain_transfers ADD COLUMN accepted_at timestamptz;

-- 4. Exact matching looks at orders in every state, not only live ones: the exact terms of a
--    closed or paid order are one index probe. Partial on non-live statuses, so creating an order
--    (always CHECKOUT_VERIFIED, the hot path) writes nothing here; live orders are found through
--    orders_live_terms_key.
CREATE INDEX orders_settled_terms_idx ON orders (chain_id, pay_to_address, token_contract, from_address, amount_wei)
  WHERE status <> 'CHECKOUT_VERIFIED';

-- 5. Fee of an accepted late payment: the order's reserve was released when it expired or was
--    cancelled, so invoicing it captures the fee straight from the available balance, one row of
--    its own kind (an order still reserves, captures, releases and late-captures at most once each).
ALTER TABLE fee_ledger DROP CONSTRAINT fee_ledger_kind_check;
ALTER TABLE fee_ledger ADD CONSTRAINT fee_ledger_kind_check CHECK (kind IN ('top_up', 'reserve', 'capture', 'release', 'late_capture'));
