import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { checkoutOf } from '../service.ts';

// JSON types only; every rule about meaning is in checkout/validate.ts (one place, unit-tested).
// The string bounds here are generous outer limits that keep the parsers' input small.
const Body = Type.Object(
  {
    checkout_type: Type.String({ maxLength: 32, description: 'DIRECT (DELEGATE is refused: delegate_checkout_unsupported)' }),
    payment_rails: Type.Optional(Type.String({ maxLength: 64, description: 'comma-joined: crypto, fiat (card is accepted for fiat; never a JSON array); default crypto' })),
    price: Type.Optional(Type.String({ maxLength: 100, description: 'positive decimal string; required when crypto is offered' })),
    fiat_currency: Type.Optional(Type.String({ maxLength: 8, description: 'ISO 4217 code of a supported currency' })),
    fiat_amount: Type.Optional(Type.String({ maxLength: 100, description: 'positive decimal string; required with fiat' })),
    client_reference_id: Type.Optional(Type.String({ maxLength: 1000, description: 'trimmed; at most 200 characters; unique per merchant when non-empty' })),
    expires_in: Type.Optional(Type.Integer({ description: 'seconds, clamped into [300, 86400]; default 3600' })),
    line_items_json: Type.Optional(Type.String({ maxLength: 60_000, description: 'JSON array of { name, quantity, amount? }; amount is per unit' })),
    public_metadata_json: Type.Optional(Type.String({ maxLength: 60_000 })),
    private_metadata_json: Type.Optional(Type.String({ maxLength: 60_000 })),
    success_url: Type.Optional(Type.String({ maxLength: 2000 })),
    cancel_url: Type.Optional(Type.String({ maxLength: 2000 })),
    merchant_id: Type.Optional(Type.String({ maxLength: 200, description: 'accepted and ignored: the merchant is the API key’s' })),
    // GOAT Network's DELEGATE session fields: typed here so the refusal is
    // delegate_checkout_unsupported rather than a schema error (docs/migrating.md).
    chain_id: Type.Optional(Type.Integer({ description: 'DELEGATE sessions only: refused (delegate_checkout_unsupported)' })),
    fixed_amount_wei: Type.Optional(Type.String({ maxLength: 100, description: 'DELEGATE sessions only: refused' })),
    callback_calldata: Type.Optional(Type.String({ maxLength: 20_000, description: 'DELEGATE sessions only: refused' })),
    acceptable_tokens: Type.Optional(Type.String({ maxLength: 60_000, description: 'DELEGATE sessions only: refused' })),
  },
  { additionalProperties: false },
);

export const createCheckoutSession = defineRoute({
  method: 'POST',
  url: '/api/v1/checkout/sessions',
  auth: 'merchant',
  summary: 'Create a hosted checkout session (HTTP 200); give the browser only checkout_id, url and expires_at',
  tags: ['checkout'],
  body: Body,
  response: {
    200: Type.Object({
      checkout_id: Type.String({ description: 'opaque handle, bearer capability; not an order id' }),
      checkout_type: Type.String(),
      url: Type.String({ description: 'hosted page; the id is in the fragment so it never reaches a server log' }),
      expires_at: Type.Integer({ description: 'Unix seconds; authoritative' }),
    }),
  },
  errors: [409],
  async handler(req, _reply, deps) {
    const out = await checkoutOf(deps).createSession(req.merchant.merchantId, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    const s = out.session;
    return { checkout_id: s.id, checkout_type: s.checkout_type, url: out.url, expires_at: Math.floor(s.expires_at.getTime() / 1000) };
  },
});
