import { Type } from '@sinclair/typebox';

// JSON types and outer bounds only; the meaning of each field is checked in quickpay/validate.ts.

export const ProductIdParams = Type.Object({ product_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const LinkIdParams = Type.Object({ link_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const SessionIdParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const ListQuery = Type.Object({ limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 100, default 50' })) }, { additionalProperties: true });
export const limitOf = (q: { limit?: string | undefined }) => Math.min(100, Math.max(1, Number(q.limit ?? 50)));

const productFields = {
  name: Type.Optional(Type.String({ maxLength: 1000, description: 'at most 200 characters after trimming' })),
  description: Type.Optional(Type.String({ maxLength: 10_000, description: 'at most 2000 characters' })),
  image_url: Type.Optional(Type.String({ maxLength: 2000, description: 'https URL shown on the hosted page' })),
  price: Type.Optional(Type.String({ maxLength: 100, description: 'crypto price, positive decimal string with at most 6 fraction digits ("" removes it)' })),
  fiat_currency: Type.Optional(Type.String({ maxLength: 8, description: 'ISO 4217, with fiat_amount (card rail)' })),
  fiat_amount: Type.Optional(Type.String({ maxLength: 100 })),
  inventory: Type.Optional(Type.Integer({ description: 'units available across the product’s links; -1 = unlimited (default)' })),
  active: Type.Optional(Type.Boolean()),
};
export const ProductCreateBody = Type.Object({ ...productFields, name: Type.String({ maxLength: 1000 }) }, { additionalProperties: false });
export const ProductUpdateBody = Type.Object(productFields, { additionalProperties: false });

const linkLimits = {
  max_payments: Type.Optional(Type.Integer({ description: 'sessions paid or still payable at most; -1 = unlimited (default)' })),
  expires_at: Type.Optional(Type.Integer({ description: 'Unix seconds; 0 removes the expiry' })),
  active: Type.Optional(Type.Boolean({ description: 'false deactivates the link (no new sessions; open ones can still be paid)' })),
};
export const LinkCreateBody = Type.Object(
  {
    product_id: Type.Optional(Type.String({ maxLength: 100, description: 'the product sold; absent = an any-amount link' })),
    min_amount: Type.Optional(Type.String({ maxLength: 100, description: 'any-amount links: smallest amount (decimal string)' })),
    max_amount: Type.Optional(Type.String({ maxLength: 100, description: 'any-amount links: largest amount (decimal string)' })),
    payment_rails: Type.Optional(Type.String({ maxLength: 64, description: 'comma-joined: crypto, card (when its rail is available; fiat is accepted for card); default crypto' })),
    options: Type.Optional(Type.String({ maxLength: 2000, description: 'comma-joined chain_id:TOKEN pairs from the merchant’s wallets; default every wallet' })),
    ...linkLimits,
  },
  { additionalProperties: false },
);
export const LinkUpdateBody = Type.Object(linkLimits, { additionalProperties: false });
