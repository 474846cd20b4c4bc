import { Type } from '@sinclair/typebox';

// Response schemas of GOAT's quick-pay wire (they are also the redaction: fastify serializes
// through them). Field names are GOAT's; see docs/quickpay.md, "GOAT's quick-pay wire".

export const GoatIdParams = Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 100, description: 'a merchant id or a payment link id (`pl_…`)' }) });

const Token = Type.Object({
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  decimals: Type.Integer(),
  min_amount_wei: Type.String({ description: 'custom amount: smallest, in the token’s smallest unit ("0" when the token takes products only)' }),
  max_amount_wei: Type.Optional(Type.String()),
});

const Product = Type.Object({
  product_key: Type.String({ description: 'the fixed-price payment link’s id' }),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  image_url: Type.Optional(Type.String()),
  price: Type.String({ description: 'decimal, token-agnostic: amount = price × 10^decimals' }),
  tokens: Type.Array(Type.Object({ chain_id: Type.Integer(), token_contract: Type.String() }), { description: 'Tollgate: the tokens this product’s link takes' }),
});

export const GoatManifestSchema = Type.Object({
  schema: Type.Literal('goatx402.quickpay.v1'),
  merchant: Type.Object({ merchant_id: Type.String(), display_name: Type.String(), logo_url: Type.Optional(Type.String()) }),
  links: Type.Object({ web: Type.String(), agent_md: Type.String(), manifest: Type.String() }),
  rails: Type.Object({
    x402: Type.Object({
      enabled: Type.Boolean(),
      custom_amount: Type.Boolean(),
      memo_required: Type.Boolean(),
      session_endpoint: Type.String(),
      tokens: Type.Array(Token),
      products: Type.Array(Product),
    }),
    mpp: Type.Object({
      enabled: Type.Boolean(),
      challenge_endpoint: Type.String(),
      verify_endpoint: Type.String(),
      routes: Type.Array(
        Type.Object({
          route_canonical: Type.String(),
          route_pricing_version: Type.Integer(),
          chain_id: Type.Integer(),
          token_symbol: Type.String(),
          token_decimals: Type.Integer(),
          token_contract: Type.String(),
          amount_wei: Type.String(),
        }),
        { description: 'merchant id: the merchant’s machine-payment routes; link id: none' },
      ),
    }),
  }),
  tollgate: Type.Object({
    scope: Type.String({ description: 'link: the id is a payment link; merchant: every active link of the merchant' }),
    merchant_id: Type.String(),
    custom_amount_link_id: Type.Optional(Type.String()),
    min_amount: Type.Optional(Type.String()),
    max_amount: Type.Optional(Type.String()),
  }),
});

export const GoatDiscoverySchema = Type.Object({
  merchant_id: Type.String(),
  display_name: Type.String(),
  logo_url: Type.Optional(Type.String()),
  quickpay_enabled: Type.Boolean(),
  links: Type.Object({ web: Type.String(), agent_md: Type.String(), manifest: Type.String() }),
  rails: Type.Object({
    x402: Type.Object({ enabled: Type.Boolean(), custom_amount: Type.Boolean(), products: Type.Integer(), tokens: Type.Integer() }),
    mpp: Type.Object({ enabled: Type.Boolean(), routes: Type.Integer() }),
  }),
});

const sessionFields = {
  session_id: Type.String({ description: '`qps_…`' }),
  status: Type.String({ description: 'ORDER_CREATED (pay it), PAYMENT_PENDING (a transfer was seen), PAYMENT_CONFIRMED, EXPIRED, FAILED' }),
  order_id: Type.Optional(Type.String()),
  order_status: Type.Optional(Type.String()),
  tx_hash: Type.Optional(Type.String()),
  chain_id: Type.Optional(Type.Integer()),
  token_symbol: Type.Optional(Type.String()),
  token_contract: Type.Optional(Type.String()),
  amount_wei: Type.Optional(Type.String({ description: 'the session’s amount in the token’s smallest unit' })),
  amount_paid_wei: Type.Optional(Type.String()),
  product_key: Type.Optional(Type.String()),
  link_id: Type.String(),
  amount: Type.String({ description: 'decimal' }),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
};

export const GoatSessionSchema = Type.Object(sessionFields, { additionalProperties: false });

export const GoatCreatedSchema = Type.Object(
  {
    ...sessionFields,
    merchant_id: Type.String(),
    reused: Type.Boolean({ description: 'true: an existing session was returned (it may already be paid: do not pay it again)' }),
    pay_to: Type.Optional(Type.String()),
    x402: Type.Optional(
      Type.Object({
        x402Version: Type.Integer(),
        accepts: Type.Array(
          Type.Object({
            scheme: Type.String(),
            network: Type.String({ description: 'CAIP-2' }),
            amount: Type.String(),
            asset: Type.String(),
            payTo: Type.String(),
            maxTimeoutSeconds: Type.Integer(),
            extra: Type.Object({ order_id: Type.String(), token_symbol: Type.String(), decimals: Type.Integer() }),
          }),
        ),
      }),
    ),
  },
  { additionalProperties: false },
);
