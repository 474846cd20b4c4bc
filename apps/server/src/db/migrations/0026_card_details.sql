-- The card behind a card order's successful payment, as the processor reports it: its brand
-- (visa, mastercard, …) and last four digits, shown in the merchant portal. Nothing more of a
-- card is ever kept (docs/card-payments.md). NULL when the processor did not report them.
ALTER TABLE card_payments
  ADD COLUMN card_brand text,
  ADD COLUMN card_last4 text;
