import { Type } from '@sinclair/typebox';

/** Answer of POST /checkout/v1/sessions/{checkout_id}/card. */
export const CardStartSchema = Type.Object({
  order_id: Type.String(),
  flow: Type.String({ description: 'FIAT_<PROCESSOR>, e.g. FIAT_TEST or FIAT_STRIPE' }),
  processor: Type.String(),
  currency: Type.String({ description: 'the session fiat_currency' }),
  amount: Type.String({ description: 'the session fiat_amount (no conversion from the crypto price)' }),
  order_status: Type.String(),
  payment_state: Type.String({ description: 'pending, processing, declined (the payer may retry), succeeded or refunded' }),
  expires_at: Type.Integer({ description: 'Unix seconds: the card payment must complete before this' }),
  next_action: Type.Object({
    type: Type.String({ description: "card_form: POST the card to Tollgate (TEST processor); redirect: send the payer to url (the processor's hosted page)" }),
    url: Type.Optional(Type.String()),
  }),
});
