import { parseDecimal } from '@tollgate/protocol';
import { hasUnstorableText, isRefusal, parseFiatCurrency, parsePositiveDecimal, parseRailList, refuse, type Refusal } from '../checkout/fields.ts';

/**
 * The rules of products, payment links and quick-pay session requests, as pure functions from a
 * request body (JSON types already checked by the route's TypeBox schema) to what to store, or the
 * first refusal. Amounts stay decimal strings; they are compared and converted with bigint only.
 */

const QUICKPAY_RAILS = ['crypto', 'card'] as const;
export type QuickPayRailName = (typeof QUICKPAY_RAILS)[number];

const MAX_NAME = 200;
const MAX_DESCRIPTION = 2000;
const MAX_MEMO = 200;
/** Fraction digits every amount of a link is checked against: the stablecoins' 6. */
const PRICE_SCALE = 6;

const present = (s: string | undefined): s is string => s !== undefined && s !== '';

export interface ProductBody {
  name?: string | undefined;
  description?: string | undefined;
  image_url?: string | undefined;
  price?: string | undefined;
  fiat_currency?: string | undefined;
  fiat_amount?: string | undefined;
  inventory?: number | undefined;
  active?: boolean | undefined;
}

export interface ProductDraft {
  name: string;
  description: string | null;
  image_url: string | null;
  price: string | null;
  fiat_currency: string | null;
  fiat_amount: string | null;
  inventory: number | null;
  active: boolean;
}

function text(raw: string | undefined, param: string, max: number): string | null | Refusal {
  if (!present(raw)) return null;
  const t = raw.trim();
  if (t.length > max) return refuse(param, `${param} must be at most ${max} characters`);
  if (hasUnstorableText(t)) return refuse(param, `${param} must not contain U+0000 or unpaired surrogates`);
  return t === '' ? null : t;
}

/** An https image URL (the hosted page's CSP allows https: images only). */
function imageUrl(raw: string | undefined): string | null | Refusal {
  if (!present(raw)) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return refuse('image_url', 'image_url must be an absolute https URL');
  }
  if (u.protocol !== 'https:' || u.username || u.password || raw.length > 2000) return refuse('image_url', 'image_url must be an https URL without credentials, at most 2000 characters');
  return u.toString();
}

/**
 * A product to insert (`base` undefined) or the product after an update (`base` = stored row):
 * absent fields keep their stored value.
 */
export function draftProduct(b: ProductBody, base?: ProductDraft): ProductDraft | Refusal {
  const name = b.name !== undefined ? text(b.name, 'name', MAX_NAME) : (base?.name ?? null);
  if (isRefusal(name)) return name;
  if (!name) return refuse('name', 'name is required');
  const description = b.description !== undefined ? text(b.description, 'description', MAX_DESCRIPTION) : (base?.description ?? null);
  if (isRefusal(description)) return description;
  const image = b.image_url !== undefined ? imageUrl(b.image_url) : (base?.image_url ?? null);
  if (isRefusal(image)) return image;
  let price = base?.price ?? null;
  if (b.price !== undefined) {
    if (b.price === '') price = null;
    else {
      const v = parsePositiveDecimal(b.price, PRICE_SCALE, 'price');
      if (isRefusal(v)) return v;
      price = b.price;
    }
  }
  let fiatCurrency = base?.fiat_currency ?? null;
  let fiatAmount = base?.fiat_amount ?? null;
  if (b.fiat_currency !== undefined || b.fiat_amount !== undefined) {
    if (!present(b.fiat_currency) && !present(b.fiat_amount)) {
      fiatCurrency = null;
      fiatAmount = null;
    } else {
      if (!present(b.fiat_currency) || !present(b.fiat_amount)) return refuse(present(b.fiat_currency) ? 'fiat_amount' : 'fiat_currency', 'fiat_currency and fiat_amount go together');
      const cur = parseFiatCurrency(b.fiat_currency);
      if (isRefusal(cur)) return cur;
      const amt = parsePositiveDecimal(b.fiat_amount, cur.minorUnits, 'fiat_amount');
      if (isRefusal(amt)) return amt;
      fiatCurrency = cur.code;
      fiatAmount = b.fiat_amount;
    }
  }
  if (price === null && fiatAmount === null) return refuse('price', 'a product needs a crypto price, a fiat amount, or both', 'invalid_amount');
  let inventory = base?.inventory ?? null;
  if (b.inventory !== undefined) {
    if (!Number.isSafeInteger(b.inventory) || b.inventory < -1) return refuse('inventory', 'inventory must be a non-negative integer (or -1 for unlimited)');
    inventory = b.inventory === -1 ? null : b.inventory;
  }
  return { name, description, image_url: image, price, fiat_currency: fiatCurrency, fiat_amount: fiatAmount, inventory, active: b.active ?? base?.active ?? true };
}

export interface LinkOption {
  chain_id: number;
  token_symbol: string;
}

export interface LinkBody {
  product_id?: string | undefined;
  min_amount?: string | undefined;
  max_amount?: string | undefined;
  payment_rails?: string | undefined;
  options?: string | undefined;
  max_payments?: number | undefined;
  expires_at?: number | undefined;
  active?: boolean | undefined;
}

export interface LinkDraft {
  product_id: string | null;
  min_amount: string | null;
  max_amount: string | null;
  payment_rails: QuickPayRailName[];
  options: LinkOption[];
  max_payments: number | null;
  expires_at: Date | null;
  active: boolean;
}

/** `"crypto,card"` (or `"crypto,fiat"`) → ['crypto', 'card']; default crypto (fields.ts `parseRailList`). */
export function parseRails(raw: string | undefined): QuickPayRailName[] | Refusal {
  return parseRailList(raw, 'card');
}

/** `"31337:USDC,1:USDT"` → [{ chain_id, token_symbol }]; empty = every merchant wallet. */
export function parseOptions(raw: string | undefined, wallets: readonly LinkOption[]): LinkOption[] | Refusal {
  if (!present(raw)) return [];
  const out: LinkOption[] = [];
  for (const p of raw.split(',').map((x) => x.trim())) {
    const m = /^([1-9][0-9]{0,9}):([A-Za-z0-9.]{1,11})$/.exec(p);
    if (!m) return refuse('options', 'options must be a comma-joined list of chain_id:TOKEN, e.g. "1:USDC,137:USDT"');
    const o = { chain_id: Number(m[1]), token_symbol: m[2]! };
    if (!wallets.some((w) => w.chain_id === o.chain_id && w.token_symbol === o.token_symbol)) {
      return refuse('options', `the merchant has no receiving wallet for ${o.token_symbol} on chain ${o.chain_id}`, 'wallet_not_found');
    }
    if (!out.some((x) => x.chain_id === o.chain_id && x.token_symbol === o.token_symbol)) out.push(o);
  }
  return out;
}

/**
 * A link to insert (`base` undefined; `productPrice` is the product's crypto price or null) or an
 * update of a stored link (`base`): an update may change limits, expiry and activity, never what
 * the link sells (a shared URL must keep meaning the same thing; make a new link instead).
 */
export function draftLink(b: LinkBody, ctx: { wallets: readonly LinkOption[]; cardEnabled: boolean; product: { price: string | null; fiat_amount: string | null } | undefined; nowMs: number }, base?: LinkDraft): LinkDraft | Refusal {
  if (base) {
    for (const f of ['product_id', 'min_amount', 'max_amount', 'payment_rails', 'options'] as const) {
      if (b[f] !== undefined) return refuse(f, `${f} cannot change on an existing link (create a new link)`);
    }
  }
  let rails = base?.payment_rails ?? ['crypto'];
  let options = base?.options ?? [];
  let productId = base?.product_id ?? null;
  let min = base?.min_amount ?? null;
  let max = base?.max_amount ?? null;
  if (!base) {
    const r = parseRails(b.payment_rails);
    if (isRefusal(r)) return r;
    if (r.includes('card') && !ctx.cardEnabled) return refuse('payment_rails', 'the card rail is not enabled for this merchant', 'rail_not_enabled');
    rails = r;
    if (rails.includes('crypto') && ctx.wallets.length === 0) return refuse('payment_rails', 'the merchant has no receiving wallet, so crypto cannot be offered', 'wallet_not_found');
    const o = parseOptions(b.options, ctx.wallets);
    if (isRefusal(o)) return o;
    options = o;
    if (present(b.product_id)) {
      if (present(b.min_amount) || present(b.max_amount)) return refuse('min_amount', 'min_amount and max_amount are for any-amount links (without product_id)');
      if (!ctx.product) return refuse('product_id', 'product not found');
      if (rails.includes('crypto') && ctx.product.price === null) return refuse('payment_rails', 'the product has no crypto price', 'invalid_amount');
      if (rails.includes('card') && ctx.product.fiat_amount === null) return refuse('payment_rails', 'the product has no fiat amount for the card rail', 'invalid_amount');
      productId = b.product_id;
    } else {
      if (rails.includes('card')) return refuse('payment_rails', 'any-amount links take crypto only for now (the card rail prices in fiat)');
      if (!present(b.min_amount) || !present(b.max_amount)) return refuse(present(b.min_amount) ? 'max_amount' : 'min_amount', 'an any-amount link (no product_id) needs min_amount and max_amount', 'invalid_amount');
      const lo = parsePositiveDecimal(b.min_amount, PRICE_SCALE, 'min_amount');
      if (isRefusal(lo)) return lo;
      const hi = parsePositiveDecimal(b.max_amount, PRICE_SCALE, 'max_amount');
      if (isRefusal(hi)) return hi;
      if (hi < lo) return refuse('max_amount', 'max_amount must be at least min_amount', 'invalid_amount');
      min = b.min_amount;
      max = b.max_amount;
    }
  }
  let maxPayments = base?.max_payments ?? null;
  if (b.max_payments !== undefined) {
    if (!Number.isSafeInteger(b.max_payments) || b.max_payments < -1 || b.max_payments === 0) return refuse('max_payments', 'max_payments must be a positive integer (or -1 for unlimited)');
    maxPayments = b.max_payments === -1 ? null : b.max_payments;
  }
  let expiresAt = base?.expires_at ?? null;
  if (b.expires_at !== undefined) {
    if (b.expires_at === 0) expiresAt = null;
    else {
      if (!Number.isSafeInteger(b.expires_at) || b.expires_at * 1000 <= ctx.nowMs || b.expires_at > 4_102_444_800) return refuse('expires_at', 'expires_at must be a future Unix time in seconds (0 removes the expiry)');
      expiresAt = new Date(b.expires_at * 1000);
    }
  }
  return { product_id: productId, min_amount: min, max_amount: max, payment_rails: rails, options, max_payments: maxPayments, expires_at: expiresAt, active: b.active ?? base?.active ?? true };
}

/**
 * The amount a session pays: the product price of a fixed link (an `amount` sent anyway must equal
 * it), or the payer's amount of an any-amount link, within [min, max] (bigint comparison at 6
 * fraction digits).
 */
export function sessionAmount(link: { min_amount: string | null; max_amount: string | null }, productPrice: string | null, raw: string | undefined): string | Refusal | { kind: 'out_of_range'; message: string } {
  if (link.min_amount === null || link.max_amount === null) {
    if (productPrice === null) return refuse('rail', 'this link has no crypto price');
    if (present(raw)) {
      const v = parsePositiveDecimal(raw, PRICE_SCALE, 'amount');
      if (isRefusal(v) || v !== parseDecimal(productPrice, PRICE_SCALE)) return refuse('amount', 'this link sells a product at a fixed price; send no amount (or exactly the price)', 'invalid_amount');
    }
    return productPrice;
  }
  if (!present(raw)) return refuse('amount', 'this any-amount link needs an amount (decimal string)', 'invalid_amount');
  const v = parsePositiveDecimal(raw, PRICE_SCALE, 'amount');
  if (isRefusal(v)) return v;
  if (v < parseDecimal(link.min_amount, PRICE_SCALE) || v > parseDecimal(link.max_amount, PRICE_SCALE)) {
    return { kind: 'out_of_range', message: `amount must be between ${link.min_amount} and ${link.max_amount}` };
  }
  return raw;
}

/** The payer's memo: trimmed, at most {@link MAX_MEMO} characters, storable text. */
export function parseMemo(raw: string | undefined): string | null | Refusal {
  return text(raw, 'memo', MAX_MEMO);
}
