import { isId, parseDecimal } from '@tollgate/protocol';
import type { QuickPayContext } from '../rails/port.ts';
import { listRoutes } from '../../mpp/repo.ts';
import * as repo from '../repo.ts';
import { linkPaymentOptions } from '../rails/crypto.ts';
import { quickpayOf } from '../service.ts';

/**
 * What a GOAT quick-pay `merchant_id` names on Tollgate (docs/quickpay.md, "GOAT's quick-pay wire").
 * GOAT's quick-pay is per merchant: one page, a custom amount, a catalogue of fixed-price products.
 * Tollgate's is per link. The id in GOAT's path may therefore be either:
 *  - a link id (`pl_…`): that one link — its product, or its amount range;
 *  - a merchant id: every active crypto link of the merchant — each fixed-price link is one product
 *    (`product_key` = the link id, so the link's own limits and options apply), the newest
 *    any-amount link carries the custom amount, and the merchant's machine-payment routes are
 *    GOAT's fixed MPP routes (paid through `/mpp/v1`, docs/machine-payments.md).
 * Both shapes pass GOAT's client path check (`^[A-Za-z0-9_-]{1,64}$`).
 */

const GOAT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const EVM_CONTRACT = /^0x[0-9a-fA-F]{40}$/;
/** How many of a merchant's links a merchant-level manifest reads (newest first). */
const MAX_LINKS = 100;

export interface GoatToken {
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
}

export interface GoatLink {
  link: repo.LinkRow;
  product: repo.ProductRow | undefined;
  /** EVM options only: GOAT's wire pays ERC-20 transfers. */
  tokens: GoatToken[];
}

export interface GoatTarget {
  /** the id as it appears in GOAT's path and in `merchant.merchant_id` */
  id: string;
  scope: 'link' | 'merchant';
  merchant: { id: string; name: string; logo_url: string | null };
  /** fixed-price links taking payments: GOAT's products */
  products: GoatLink[];
  /** the any-amount link taking payments: GOAT's custom amount */
  custom: GoatLink | undefined;
  /** merchant scope: the merchant's priced machine-payment routes (EVM tokens) */
  mppRoutes: (GoatToken & { route_canonical: string; version: number; amount_wei: string })[];
}

async function entry(deps: QuickPayContext, link: repo.LinkRow, product: repo.ProductRow | undefined): Promise<GoatLink | undefined> {
  if (!link.payment_rails.includes('crypto')) return undefined;
  if ((await quickpayOf(deps).linkState(link, product)) !== 'ACTIVE') return undefined;
  const wallets = await linkPaymentOptions(deps, link);
  const tokens = wallets
    .filter((w) => EVM_CONTRACT.test(w.token_contract))
    .filter((w) => {
      // A token that cannot carry the price exactly is not offered (as on the hosted page).
      if (product?.price == null) return true;
      try {
        parseDecimal(product.price, w.decimals);
        return true;
      } catch {
        return false;
      }
    })
    .map((w) => ({ chain_id: w.chain_id, token_symbol: w.token_symbol, token_contract: w.token_contract, decimals: w.decimals }));
  if (tokens.length === 0) return undefined;
  return { link, product, tokens };
}

/** The links a GOAT id stands for, or undefined when it names no link or merchant. */
export async function resolveGoatTarget(deps: QuickPayContext, id: string): Promise<GoatTarget | undefined> {
  if (!GOAT_ID.test(id)) return undefined;
  if (isId('pl', id)) {
    const found = await quickpayOf(deps).publicLink(id);
    if (!found) return undefined;
    const e = await entry(deps, found.link, found.product);
    return {
      id,
      scope: 'link',
      merchant: found.merchant,
      products: e && found.product ? [e] : [],
      custom: e && !found.product ? e : undefined,
      mppRoutes: [],
    };
  }
  const m = await deps.merchants.getMerchant(id);
  if (!m) return undefined;
  const products: GoatLink[] = [];
  let custom: GoatLink | undefined;
  for (const link of await repo.listLinks(deps.db, m.id, MAX_LINKS)) {
    const product = link.product_id ? await repo.getProduct(deps.db, link.product_id, m.id) : undefined;
    if (link.product_id && !product) continue;
    const e = await entry(deps, link, product);
    if (!e) continue;
    if (product) products.push(e);
    else custom ??= e; // listLinks is newest first
  }
  const mppRoutes = [];
  for (const r of await listRoutes(deps.db, m.id)) {
    const t = deps.merchants.resolveToken(r.chain_id, r.token_symbol);
    if (typeof t === 'string' || !EVM_CONTRACT.test(r.token_contract)) continue;
    mppRoutes.push({ route_canonical: r.route_canonical, version: r.version, chain_id: r.chain_id, token_symbol: r.token_symbol, token_contract: r.token_contract, decimals: t.decimals, amount_wei: r.amount_wei });
  }
  return { id, scope: 'merchant', merchant: { id: m.id, name: m.name, logo_url: m.logo_url }, products, custom, mppRoutes };
}
