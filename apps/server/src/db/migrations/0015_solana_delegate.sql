-- SOL_APPROVE_XFER (DELEGATE on Solana, docs/solana.md): the gateway's pull-and-settle transactions.
-- One row per attempt, written with the SIGNED transaction before it is sent (record-before-send):
-- after a crash the same bytes are sent again (same signature: it lands at most once). A new attempt
-- is made only once the previous one can no longer land (its blockhash expired unseen: 'expired').
CREATE TABLE solana_settlements (
  id                       bigserial PRIMARY KEY,
  order_id                 text NOT NULL REFERENCES orders (id),
  chain_id                 integer NOT NULL,
  signature                text COLLATE "C" NOT NULL UNIQUE,
  -- base64 of the signed transaction (public once sent; no key material)
  wire_tx                  text NOT NULL,
  last_valid_block_height  bigint NOT NULL,
  -- the payer's approveChecked the pull relies on (found by the order's reference key)
  approval_signature       text COLLATE "C",
  status                   text NOT NULL CHECK (status IN ('pending', 'sent', 'confirmed', 'finalized', 'failed', 'expired')),
  error                    text,
  slot                     bigint,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
-- Once per order: at most one attempt that may still land or has landed.
CREATE UNIQUE INDEX solana_settlements_once ON solana_settlements (order_id) WHERE status <> 'expired';
CREATE INDEX solana_settlements_open ON solana_settlements (chain_id) WHERE status IN ('pending', 'sent', 'confirmed');
