-- Solana orders never clash on terms (docs/solana.md): a SOL_ flow's transfer names its order by
-- the order's reference key, so two live SOL_ orders with the same payer, wallet, token and amount
-- are told apart and both may exist (a payer back on a new checkout session with the same price).
-- orders_live_terms_key keeps its five columns in front, so every lookup and loose index scan that
-- used them (chain/evm/matching.ts, chain/evm/scan.ts, chain/solana/repo.ts) still does; a sixth
-- key is '' for every other flow (unique on the five, as before) and the order id for SOL_ flows
-- (never equal to another row's).
DROP INDEX orders_live_terms_key;
CREATE UNIQUE INDEX orders_live_terms_key ON orders (chain_id, pay_to_address, token_contract, from_address, amount_wei,
  (CASE WHEN left(flow, 4) = 'SOL_' THEN id ELSE '' END))
  WHERE status = 'CHECKOUT_VERIFIED';
