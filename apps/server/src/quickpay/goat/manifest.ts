import { parseDecimal } from '@tollgate/protocol';
import type { GoatLink, GoatTarget, GoatToken } from './target.ts';

/**
 * GOAT's quick-pay manifest (`schema: goatx402.quickpay.v1`, served at
 * `/quickpay/{merchant_id}/manifest.json`) and its agent document, built from the links a GOAT id
 * stands for (target.ts). Field names, types and bounds are GOAT's, as its quick-pay client checks
 * them: tokens carry `min_amount_wei` (and `max_amount_wei`) as integer strings, products a
 * token-agnostic decimal `price` under a `product_key` of `^[A-Za-z0-9._:~-]{1,64}$`, image URLs
 * https only. The client trusts the origin it was given, not URLs inside the manifest; they are
 * informative. Tollgate's own signed manifest of a link (quickpay/manifest.ts) is unchanged.
 */
const GOAT_SCHEMA = 'goatx402.quickpay.v1';

export interface GoatUrls {
  base: string;
  web: string;
  agent_md: string;
  manifest: string;
  session_endpoint: string;
  discovery: string;
}

function goatUrls(baseUrl: string, id: string): GoatUrls {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    base,
    web: `${base}/quickpay/${id}`,
    agent_md: `${base}/quickpay/${id}/agent.md`,
    manifest: `${base}/quickpay/${id}/manifest.json`,
    session_endpoint: `${base}/quickpay/v1/x402/sessions`,
    discovery: `${base}/quickpay/v1/merchants/${id}`,
  };
}

const httpsOnly = (u: string | null | undefined) => (u?.startsWith('https://') ? u : undefined);
const key = (t: GoatToken) => `${t.chain_id}:${t.token_contract.toLowerCase()}`;

/** Every token offered by the target's links, once per chain and contract, with the custom range. */
function tokensOf(t: GoatTarget) {
  const out = new Map<string, GoatToken & { min_amount_wei: string; max_amount_wei?: string }>();
  // The custom-amount link's range, in each token's smallest unit: the lower bound rounded up and
  // the upper one down, so every amount inside the range in wei is one the link accepts.
  if (t.custom) {
    const { min_amount, max_amount } = t.custom.link;
    for (const tk of t.custom.tokens) {
      const min = ceilUnits(min_amount!, tk.decimals);
      const max = floorUnits(max_amount!, tk.decimals);
      if (max < min) continue;
      out.set(key(tk), { ...tk, min_amount_wei: min.toString(), max_amount_wei: max.toString() });
    }
  }
  // Tokens only products take: no custom amount on them (`min_amount_wei` is GOAT's required field).
  for (const p of t.products) for (const tk of p.tokens) if (!out.has(key(tk))) out.set(key(tk), { ...tk, min_amount_wei: '0' });
  return [...out.values()];
}

function splitDecimal(s: string, decimals: number): { units: bigint; rest: boolean } {
  const [i, f = ''] = s.split('.');
  const kept = f.slice(0, decimals).padEnd(decimals, '0');
  return { units: parseDecimal(`${i}${kept ? `.${kept}` : ''}`, decimals), rest: /[1-9]/.test(f.slice(decimals)) };
}
const ceilUnits = (s: string, d: number) => {
  const { units, rest } = splitDecimal(s, d);
  return rest ? units + 1n : units;
};
const floorUnits = (s: string, d: number) => splitDecimal(s, d).units;

function product(p: GoatLink) {
  const pr = p.product!;
  return {
    product_key: p.link.id,
    name: pr.name,
    ...(pr.description ? { description: pr.description } : {}),
    ...(httpsOnly(pr.image_url) ? { image_url: pr.image_url! } : {}),
    price: pr.price!,
    // Tollgate's own: the tokens this product's link takes (a subset of rails.x402.tokens).
    tokens: p.tokens.map((tk) => ({ chain_id: tk.chain_id, token_contract: tk.token_contract })),
  };
}

/** The manifest body. Pure: the same target and base URL give the same JSON. */
export function buildGoatManifest(t: GoatTarget, baseUrl: string) {
  const urls = goatUrls(baseUrl, t.id);
  const products = t.products.filter((p) => p.product?.price != null).map(product);
  const tokens = tokensOf(t);
  return {
    schema: GOAT_SCHEMA,
    merchant: { merchant_id: t.id, display_name: t.merchant.name, ...(httpsOnly(t.merchant.logo_url) ? { logo_url: t.merchant.logo_url! } : {}) },
    links: { web: urls.web, agent_md: urls.agent_md, manifest: urls.manifest },
    rails: {
      x402: {
        enabled: tokens.length > 0 && (t.custom !== undefined || products.length > 0),
        custom_amount: t.custom !== undefined,
        memo_required: false,
        session_endpoint: urls.session_endpoint,
        tokens,
        products,
      },
      // Machine payments are priced per route of the merchant (docs/machine-payments.md): a
      // merchant id lists them; a link id has none. GOAT's client pays them through /mpp/v1.
      mpp: {
        enabled: t.mppRoutes.length > 0,
        challenge_endpoint: `${urls.base}/mpp/v1/challenge`,
        verify_endpoint: `${urls.base}/mpp/v1/verify`,
        routes: t.mppRoutes.map((r) => ({
          route_canonical: r.route_canonical,
          route_pricing_version: r.version,
          chain_id: r.chain_id,
          token_symbol: r.token_symbol,
          token_decimals: r.decimals,
          token_contract: r.token_contract,
          amount_wei: r.amount_wei,
        })),
      },
    },
    tollgate: {
      scope: t.scope,
      merchant_id: t.merchant.id,
      ...(t.custom ? { custom_amount_link_id: t.custom.link.id, min_amount: t.custom.link.min_amount!, max_amount: t.custom.link.max_amount! } : {}),
    },
  };
}

export type GoatManifest = ReturnType<typeof buildGoatManifest>;

/** GOAT's `agent.md`: the same facts for an agent, with GOAT's CLI commands and the raw HTTP steps. */
export function goatAgentMarkdown(m: GoatManifest, baseUrl: string): string {
  const urls = goatUrls(baseUrl, m.merchant.merchant_id);
  const x = m.rails.x402;
  const tokens = x.tokens.map((t) => `- chain ${t.chain_id}: ${t.token_symbol} \`${t.token_contract}\` (${t.decimals} decimals)${t.max_amount_wei ? `, custom amount ${t.min_amount_wei} to ${t.max_amount_wei} base units` : ''}`).join('\n') || '- none';
  const products = x.products.map((p) => `- \`${p.product_key}\`: ${p.name}, ${p.price} (token-agnostic; on-chain amount = price × 10^decimals)`).join('\n') || '- none';
  const routes = m.rails.mpp.routes.map((r) => `- \`${r.route_canonical}\`: ${r.amount_wei} base units of ${r.token_symbol} on chain ${r.chain_id}`).join('\n') || '- none';
  const custom = x.custom_amount ? `any amount from ${m.tollgate.min_amount} to ${m.tollgate.max_amount}` : 'not offered';
  return `# Pay ${m.merchant.display_name} (quick-pay)

Merchant id \`${m.merchant.merchant_id}\`; payments: ${x.enabled ? 'open' : 'closed'}. Machine-readable: ${urls.manifest}
(schema \`${GOAT_SCHEMA}\`). Trust the origin of this URL only; every endpoint below is on it.

Tokens (ERC-20):
${tokens}

Products:
${products}

Custom amount: ${custom}.

Machine-payment routes (MPP, paid through ${urls.base}/mpp/v1):
${routes}

With GOAT's quick-pay CLI (payer key in \`QUICKPAY_PRIVATE_KEY\`, RPC in \`QUICKPAY_RPC_<chainId>\`):

    goatx402-quickpay inspect ${urls.agent_md}
    goatx402-quickpay pay-product ${urls.agent_md} --product <product_key> --token-contract <address> --chain <id>
    goatx402-quickpay pay-x402 ${urls.agent_md} --amount <decimal> --token-contract <address> --chain <id>
    goatx402-quickpay pay-mpp ${urls.agent_md} --route <route_canonical>

Over HTTP:

1. POST ${urls.session_endpoint} with JSON \`{ "merchant_id": "${m.merchant.merchant_id}", "payer_addr", "chain_id",
   "token_contract", "product_key" | "amount_wei", "memo"?, "idempotency_key"? }\` → \`{ session_id, status,
   reused, x402: { accepts: [{ scheme: "exact", network, amount, asset, payTo }] } }\`.
2. If \`status\` is ORDER_CREATED and \`reused\` is false: from \`payer_addr\`, transfer exactly \`amount\` of
   \`asset\` to \`payTo\` on that network in one transfer. A reused session may already be paid: do not
   pay it again, poll it.
3. GET ${urls.session_endpoint}/{session_id} every few seconds until \`status\` is PAYMENT_CONFIRMED
   (EXPIRED, FAILED or CANCELLED: stop). The merchant confirms delivery with its own backend.
`;
}
