-- Who holds a quick-pay session's unit of a limited link or product: a keyed hash of the client
-- address that opened it (quickpay/holds.ts; never the address itself). A client address may hold
-- only a few unpaid sessions of one link or product at a time, so anonymous sessions from one
-- address cannot take a product's whole stock (docs/quickpay.md, "Limits and holds").
ALTER TABLE quickpay_sessions ADD COLUMN holder text COLLATE "C";
CREATE INDEX quickpay_sessions_holder_idx ON quickpay_sessions (holder, created_at) WHERE holder IS NOT NULL;
