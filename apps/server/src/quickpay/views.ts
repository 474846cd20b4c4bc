import { Type } from '@sinclair/typebox';
import { parseDecimal } from '@tollgate/protocol';
import type { ChainConfig } from '../config/schema.ts';
import type { WalletView } from '../merchants/service.ts';
import type { LinkRow, ProductRow, SessionWithOrder } from './repo.ts';
import type { QuickPayRail, QuickPayStatus, RailConfig } from './rails/port.ts';
import type { LinkState } from './service.ts';

/**
 * Response schemas and projections of quick-pay. As in checkout/views.ts, the schemas are also the
 * redaction: fastify serializes through them, so a field not listed never leaves the server.
 */

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

export const ProductSchema = Type.Object({
  product_id: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  image_url: Type.Optional(Type.String()),
  price: Type.Optional(Type.String({ description: 'crypto price (decimal string, stablecoin units), converted exactly per token' })),
  fiat_currency: Type.Optional(Type.String()),
  fiat_amount: Type.Optional(Type.String()),
  inventory: Type.Optional(Type.Integer({ description: 'units; absent = unlimited' })),
  active: Type.Boolean(),
  created_at: Type.String(),
});

export function productView(p: ProductRow) {
  return {
    product_id: p.id,
    name: p.name,
    ...(p.description !== null ? { description: p.description } : {}),
    ...(p.image_url !== null ? { image_url: p.image_url } : {}),
    ...(p.price !== null ? { price: p.price } : {}),
    ...(p.fiat_currency !== null ? { fiat_currency: p.fiat_currency, fiat_amount: p.fiat_amount! } : {}),
    ...(p.inventory !== null ? { inventory: p.inventory } : {}),
    active: p.active,
    created_at: p.created_at.toISOString(),
  };
}

const OptionSchema = Type.Object({ chain_id: Type.Integer(), token_symbol: Type.String() });

export const LinkSchema = Type.Object({
  link_id: Type.String(),
  url: Type.String({ description: 'the hosted page of the link (shareable)' }),
  manifest_url: Type.String({ description: 'signed agent manifest (JSON)' }),
  product_id: Type.Optional(Type.String()),
  min_amount: Type.Optional(Type.String()),
  max_amount: Type.Optional(Type.String()),
  payment_rails: Type.Array(Type.String()),
  options: Type.Array(OptionSchema, { description: 'chain/token pairs offered; empty = every merchant wallet' }),
  max_payments: Type.Optional(Type.Integer()),
  expires_at: Type.Optional(Type.Integer({ description: 'Unix seconds' })),
  active: Type.Boolean(),
  created_at: Type.String(),
});

export function linkView(l: LinkRow, baseUrl: string) {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    link_id: l.id,
    url: `${base}/quickpay/pay/${l.id}`,
    manifest_url: `${base}/quickpay/v1/links/${l.id}/manifest.json`,
    ...(l.product_id !== null ? { product_id: l.product_id } : {}),
    ...(l.min_amount !== null ? { min_amount: l.min_amount, max_amount: l.max_amount! } : {}),
    payment_rails: l.payment_rails,
    options: l.options,
    ...(l.max_payments !== null ? { max_payments: l.max_payments } : {}),
    ...(l.expires_at !== null ? { expires_at: unix(l.expires_at) } : {}),
    active: l.active,
    created_at: l.created_at.toISOString(),
  };
}

const PaymentOptionSchema = Type.Object({
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  decimals: Type.Integer(),
  amount_wei: Type.Optional(Type.String({ description: 'the price in the token’s smallest unit (fixed-price links)' })),
  chain_name: Type.Optional(Type.String()),
  explorer_url: Type.Optional(Type.String()),
});

/** A link's options with the fixed price converted exactly into each token's smallest unit. */
export function paymentOptions(wallets: readonly WalletView[], price: string | null, chains: readonly Pick<ChainConfig, 'chainId' | 'name' | 'explorerUrl'>[]) {
  const out = [];
  for (const w of wallets) {
    let amountWei: string | undefined;
    if (price !== null) {
      try {
        amountWei = parseDecimal(price, w.decimals).toString();
      } catch {
        continue; // a token that cannot represent the price exactly is not offered
      }
    }
    const c = chains.find((x) => x.chainId === w.chain_id);
    out.push({
      chain_id: w.chain_id,
      token_symbol: w.token_symbol,
      token_contract: w.token_contract,
      decimals: w.decimals,
      ...(amountWei !== undefined ? { amount_wei: amountWei } : {}),
      ...(c ? { chain_name: c.name } : {}),
      ...(c?.explorerUrl ? { explorer_url: c.explorerUrl } : {}),
    });
  }
  return out;
}

export const PublicLinkSchema = Type.Object({
  link_id: Type.String(),
  state: Type.String({ description: 'ACTIVE (takes payments), INACTIVE, EXPIRED, SOLD_OUT' }),
  kind: Type.String({ description: 'fixed (sells a product) or any_amount' }),
  url: Type.String(),
  manifest_url: Type.String(),
  merchant: Type.Object({ merchant_id: Type.String(), name: Type.String(), logo_url: Type.Optional(Type.String()) }),
  product: Type.Optional(Type.Object({ name: Type.String(), description: Type.Optional(Type.String()), image_url: Type.Optional(Type.String()) })),
  price: Type.Optional(Type.String()),
  fiat_currency: Type.Optional(Type.String()),
  fiat_amount: Type.Optional(Type.String()),
  min_amount: Type.Optional(Type.String()),
  max_amount: Type.Optional(Type.String()),
  payment_rails: Type.Array(Type.String()),
  payment_options: Type.Array(PaymentOptionSchema),
  expires_at: Type.Optional(Type.Integer()),
});

export function publicLinkView(a: { link: LinkRow; product: ProductRow | undefined; merchant: { id: string; name: string; logo_url: string | null } }, state: LinkState, options: ReturnType<typeof paymentOptions>, baseUrl: string) {
  const { link: l, product: p, merchant: m } = a;
  const v = linkView(l, baseUrl);
  return {
    link_id: l.id,
    state,
    kind: p ? 'fixed' : 'any_amount',
    url: v.url,
    manifest_url: v.manifest_url,
    merchant: { merchant_id: m.id, name: m.name, ...(m.logo_url ? { logo_url: m.logo_url } : {}) },
    ...(p
      ? {
          product: { name: p.name, ...(p.description !== null ? { description: p.description } : {}), ...(p.image_url !== null ? { image_url: p.image_url } : {}) },
          ...(p.price !== null ? { price: p.price } : {}),
          ...(p.fiat_currency !== null ? { fiat_currency: p.fiat_currency, fiat_amount: p.fiat_amount! } : {}),
        }
      : { min_amount: l.min_amount!, max_amount: l.max_amount! }),
    payment_rails: l.payment_rails,
    payment_options: options,
    ...(l.expires_at !== null ? { expires_at: unix(l.expires_at) } : {}),
  };
}

/** A card session's terms: what the card payment charges (rails/card.ts). */
const CardTermsSchema = Type.Object({
  order_id: Type.String({ description: 'the FIAT_<PROCESSOR> order' }),
  checkout_id: Type.String({ description: 'the card session’s checkout id: its own `qps_` id' }),
  processor: Type.String({ description: 'TEST or STRIPE; how to pay is next_action' }),
  currency: Type.String(),
  amount: Type.String({ description: 'decimal, in the currency' }),
  amount_minor: Type.String({ description: 'the amount in minor units (950 for EUR 9.50)' }),
  expires_at: Type.Integer({ description: 'Unix seconds: the card payment must start before it (a payment the processor is still processing then keeps the session OPEN until it answers)' }),
  payment_state: Type.String({ description: 'pending, processing (do not pay again), declined (the payer may retry), succeeded or refunded' }),
  next_action: Type.Object({
    type: Type.String({ description: "card_form: POST the card to /quickpay/v1/sessions/{session_id}/card/test-payment (TEST processor); redirect: send the payer to url (the processor's hosted page)" }),
    url: Type.Optional(Type.String()),
  }),
});

const CryptoTermsSchema = Type.Object({
  order_id: Type.String(),
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  decimals: Type.Integer(),
  pay_to_address: Type.String(),
  amount_wei: Type.String(),
  expires_at: Type.Integer({ description: 'Unix seconds: the payment window' }),
  payment_url: Type.Optional(Type.String({ description: 'Solana: the order’s Solana Pay transfer request (`solana:` URL with its reference key, which attributes the payment)' })),
});

export const SessionSchema = Type.Object(
  {
    session_id: Type.String({ description: '`qps_…`' }),
    status: Type.String({ description: 'crypto: OPEN, PAYMENT_CONFIRMED (order PAYMENT_CONFIRMED or INVOICED), EXPIRED, FAILED; card: OPEN, COMPLETED (order INVOICED), EXPIRED, FAILED' }),
    rail: Type.Optional(Type.String()),
    link_id: Type.Optional(Type.String()),
    amount: Type.Optional(Type.String({ description: 'decimal amount asked' })),
    memo: Type.Optional(Type.String()),
    expires_at: Type.Optional(Type.Integer()),
    terms: Type.Optional(Type.Union([CryptoTermsSchema, CardTermsSchema])),
    order_id: Type.Optional(Type.String()),
    order_status: Type.Optional(Type.String()),
    tx_hash: Type.Optional(Type.String()),
    amount_paid_wei: Type.Optional(Type.String({ description: 'what arrived (once the payment is confirmed)' })),
  },
  { additionalProperties: false },
);

/** The status projection of a session: status, order_id?, order_status?, tx_hash?, amount_paid_wei?. */
function sessionStatusView(v: SessionWithOrder, status: QuickPayStatus) {
  const o = v.order;
  return {
    session_id: v.session.id,
    status,
    ...(o ? { order_id: o.id, order_status: o.status } : {}),
    ...(o?.tx_hash ? { tx_hash: o.tx_hash } : {}),
    ...(o?.paid_amount_wei && status !== 'OPEN' ? { amount_paid_wei: o.paid_amount_wei } : {}),
  };
}

/**
 * The answer to session creation (docs/quickpay.md "Sessions"): an OPEN session carries its payment terms;
 * an expired or settled one only its status.
 */
export function sessionCreatedView(v: SessionWithOrder, status: QuickPayStatus, rail: QuickPayRail, config: RailConfig) {
  if (status !== 'OPEN') return sessionStatusView(v, status);
  const s = v.session;
  const terms = rail.terms(v, config);
  return {
    ...sessionStatusView(v, status),
    rail: s.rail,
    link_id: s.link_id,
    amount: s.amount,
    ...(s.memo !== null ? { memo: s.memo } : {}),
    expires_at: unix(s.expires_at),
    ...(terms ? { terms } : {}),
  };
}

export const MerchantSessionSchema = Type.Object({
  session_id: Type.String(),
  status: Type.String(),
  rail: Type.String(),
  amount: Type.String(),
  memo: Type.Optional(Type.String()),
  chain_id: Type.Optional(Type.Integer()),
  token_symbol: Type.Optional(Type.String()),
  from_address: Type.Optional(Type.String()),
  order_id: Type.Optional(Type.String()),
  order_status: Type.Optional(Type.String()),
  tx_hash: Type.Optional(Type.String()),
  amount_paid_wei: Type.Optional(Type.String()),
  completed_at: Type.Optional(Type.String()),
  created_at: Type.String(),
});

/** A session as its merchant sees it (records): amount asked, memo as reference, its order. */
export function merchantSessionView(v: SessionWithOrder, status: QuickPayStatus) {
  const s = v.session;
  const o = v.order;
  return {
    session_id: s.id,
    status,
    rail: s.rail,
    amount: s.amount,
    ...(s.memo !== null ? { memo: s.memo } : {}),
    ...(s.chain_id !== null ? { chain_id: s.chain_id } : {}),
    ...(s.token_symbol !== null ? { token_symbol: s.token_symbol } : {}),
    ...(s.from_address !== null ? { from_address: s.from_address } : {}),
    ...(o ? { order_id: o.id, order_status: o.status } : {}),
    ...(o?.tx_hash ? { tx_hash: o.tx_hash } : {}),
    ...(o?.paid_amount_wei ? { amount_paid_wei: o.paid_amount_wei } : {}),
    ...(s.completed_at ? { completed_at: s.completed_at.toISOString() } : {}),
    created_at: s.created_at.toISOString(),
  };
}
