import { LINK_STATES } from '@tollgate/protocol';
import { Type, type Static } from '@sinclair/typebox';
import type { PublicLinkSchema } from './views.ts';

/**
 * The agent manifest of a payment link: everything an automated client needs to pay the link
 * without the hosted page — the routes, the amounts, the chains and tokens — signed by this
 * gateway. The manifest is the payload of a compact JWS (EdDSA, `typ` {@link MANIFEST_TYP}) made
 * with the gateway's published Ed25519 key set (the receipts' JWKS at `/.well-known/jwks.json`):
 * a client that fetched it from anywhere (a cache, a chat message, another agent) checks that it
 * came from this Tollgate and names this link, then trusts only the signed payload.
 */
export const MANIFEST_TYP = 'tollgate-quickpay-manifest+jws';
const MANIFEST_TYPE = 'tollgate.quickpay.link';

type PublicLink = Static<typeof PublicLinkSchema>;

/**
 * The published shape of the manifest (served in OpenAPI with the route): a client validates the
 * signed payload against it before following it. Additional properties are allowed so a newer
 * gateway can add fields without breaking older clients.
 */
export const ManifestSchema = Type.Object(
  {
    type: Type.Literal(MANIFEST_TYPE),
    version: Type.Literal(1),
    issuer: Type.String({ description: 'base URL of the Tollgate that signed it' }),
    jwks_uri: Type.String(),
    issued_at: Type.Integer({ description: 'Unix seconds' }),
    link_id: Type.String(),
    link_url: Type.String(),
    state: Type.Union(LINK_STATES.map((s) => Type.Literal(s))),
    merchant: Type.Object({ merchant_id: Type.String(), name: Type.String() }),
    kind: Type.Union([Type.Literal('fixed'), Type.Literal('any_amount')]),
    product: Type.Optional(Type.Object({ name: Type.String(), description: Type.Optional(Type.String()) })),
    price: Type.Optional(Type.String({ description: 'fixed links: decimal price' })),
    min_amount: Type.Optional(Type.String()),
    max_amount: Type.Optional(Type.String()),
    expires_at: Type.Optional(Type.Integer()),
    rails: Type.Array(Type.String()),
    payment_options: Type.Array(
      Type.Object({
        chain_id: Type.Integer(),
        network: Type.String({ description: 'CAIP-2, eip155:<chain_id>' }),
        token_symbol: Type.String(),
        token_contract: Type.String(),
        decimals: Type.Integer(),
        amount_wei: Type.Optional(Type.String({ description: 'fixed links: the price in the token’s smallest unit' })),
      }),
    ),
    steps: Type.Object({
      create_session: Type.Object({ method: Type.String(), url: Type.String(), content_type: Type.String() }, { additionalProperties: true }),
      pay: Type.String(),
      poll_status: Type.Object({ method: Type.String(), url_template: Type.String(), done_when: Type.String() }, { additionalProperties: true }),
    }),
    errors: Type.Record(Type.String(), Type.String()),
  },
  { additionalProperties: true },
);

/** The manifest body (the JWS payload). Pure: the same link, base URL and time give the same JSON. */
export function buildManifest(v: PublicLink, baseUrl: string, nowMs: number) {
  const base = baseUrl.replace(/\/+$/, '');
  const fixed = v.kind === 'fixed';
  return {
    type: MANIFEST_TYPE,
    version: 1,
    issuer: base,
    jwks_uri: `${base}/.well-known/jwks.json`,
    issued_at: Math.floor(nowMs / 1000),
    link_id: v.link_id,
    link_url: v.url,
    state: v.state,
    merchant: { merchant_id: v.merchant.merchant_id, name: v.merchant.name },
    kind: v.kind,
    ...(v.product ? { product: { name: v.product.name, ...(v.product.description ? { description: v.product.description } : {}) } } : {}),
    ...(v.price !== undefined ? { price: v.price } : {}),
    ...(v.min_amount !== undefined ? { min_amount: v.min_amount, max_amount: v.max_amount } : {}),
    ...(v.expires_at !== undefined ? { expires_at: v.expires_at } : {}),
    rails: v.payment_rails,
    payment_options: v.payment_options.map((o) => ({
      chain_id: o.chain_id,
      network: `eip155:${o.chain_id}`,
      token_symbol: o.token_symbol,
      token_contract: o.token_contract,
      decimals: o.decimals,
      ...(o.amount_wei !== undefined ? { amount_wei: o.amount_wei } : {}),
    })),
    steps: {
      create_session: {
        method: 'POST',
        url: `${base}/quickpay/v1/links/${v.link_id}/sessions`,
        content_type: 'application/json',
        body: {
          rail: 'crypto',
          chain_id: 'integer: chain_id of one payment_options entry',
          token_symbol: 'string: token_symbol of the same entry',
          from_address: 'string: the EVM address that will send the transfer (payments are attributed by sender)',
          ...(fixed ? {} : { amount: `decimal string between ${v.min_amount} and ${v.max_amount}` }),
          memo: 'optional string (at most 200 characters): your reference, shown to the merchant',
          idempotency_key: 'optional string (1 to 128 printable ASCII): repeat it on retry to get the same session',
        },
        response: 'HTTP 200 { session_id, status: "OPEN", terms: { chain_id, token_contract, pay_to_address, amount_wei, expires_at } }',
      },
      pay: 'from from_address, call transfer(terms.pay_to_address, terms.amount_wei) on the ERC-20 terms.token_contract on chain terms.chain_id before terms.expires_at (Unix seconds); send exactly amount_wei in one transfer',
      poll_status: {
        method: 'GET',
        url_template: `${base}/quickpay/v1/sessions/{session_id}`,
        done_when: 'status is PAYMENT_CONFIRMED (the order is PAYMENT_CONFIRMED or INVOICED)',
        failed_when: 'status is EXPIRED or FAILED',
        interval_seconds: 2,
      },
    },
    errors: {
      '404': 'link_not_found',
      '410': 'link_inactive, link_expired, link_sold_out: the link takes no new payment',
      '409': 'idempotency_key_conflict, order_conflict: the request clashes with an earlier one',
      '400': 'amount_out_of_range, invalid_amount, chain_not_supported, token_not_supported, invalid_request',
      '429': 'rate limited: honor Retry-After',
      '503': 'quick-pay temporarily unavailable: retry later',
    },
  };
}

export type Manifest = ReturnType<typeof buildManifest>;

/** The short markdown for agents (`agent.md`): the same facts, and where the signed JSON is. */
export function agentMarkdown(m: Manifest, manifestUrl: string): string {
  const opts = m.payment_options.map((o) => `- chain_id ${o.chain_id} (${o.network}), ${o.token_symbol} at ${o.token_contract}, ${o.decimals} decimals${o.amount_wei ? `: pay ${o.amount_wei} base units` : ''}`).join('\n');
  const amount = m.kind === 'fixed' ? `fixed price ${m.price} (per token: see options)` : `any amount between ${m.min_amount} and ${m.max_amount} (send \`amount\` as a decimal string)`;
  const what = m.product ? `${m.product.name}${m.product.description ? ` — ${m.product.description}` : ''}` : 'a payment of your chosen amount';
  return `# Pay ${m.merchant.name}: ${what}

Link \`${m.link_id}\` (${m.state}); ${amount}.

Verify before paying: fetch the signed manifest ${manifestUrl}; its \`signature\` is a compact JWS
(EdDSA, typ \`${MANIFEST_TYP}\`) that must verify with a key of ${m.jwks_uri}, and its payload
must name issuer ${m.issuer} and link_id ${m.link_id}. Use only the signed payload.

Options (chain, token):
${opts}

1. POST ${m.steps.create_session.url} with JSON
   \`{ "chain_id", "token_symbol", "from_address"${m.kind === 'fixed' ? '' : ', "amount"'}, "memo"?, "idempotency_key"? }\`
   → 200 \`{ session_id, status: "OPEN", terms: { chain_id, token_contract, pay_to_address, amount_wei, expires_at } }\`.
2. From \`from_address\`, transfer exactly \`terms.amount_wei\` of \`terms.token_contract\` to
   \`terms.pay_to_address\` on chain \`terms.chain_id\` before \`terms.expires_at\`.
3. GET ${m.steps.poll_status.url_template} every 2 s until \`status\` is PAYMENT_CONFIRMED
   (EXPIRED or FAILED: stop). Errors: 410 the link takes no payment, 409 conflict, 429 slow down.
`;
}
