import { MoneyError, parseDecimal } from '@tollgate/protocol';

/**
 * Field rules of a checkout session that need no database: fiat currencies, line items and the two
 * metadata objects. Each parser returns the value or a {@link Refusal} naming the wire field.
 */

export interface Refusal {
  kind: 'refused';
  code: 'invalid_request' | 'invalid_amount' | 'return_url_not_allowed' | 'rail_not_enabled' | 'wallet_not_found' | 'delegate_checkout_unsupported';
  message: string;
  param: string;
}

export const refuse = (param: string, message: string, code: Refusal['code'] = 'invalid_request'): Refusal => ({ kind: 'refused', code, message, param });
export const isRefusal = (v: unknown): v is Refusal => typeof v === 'object' && v !== null && (v as Refusal).kind === 'refused';

/**
 * The card rail has two names on the wire: `fiat` in checkout sessions (the interface GOAT's SDKs
 * speak fixes it) and `card` everywhere Tollgate names it itself (payment links, quick-pay sessions,
 * the CLI, the portal). Either word is accepted wherever a rail is named; each surface answers in
 * its own word (`cardWord`), so a stored or returned list never mixes the two.
 */
const CARD_RAIL_NAMES = ['card', 'fiat'] as const;

/** One rail name → 'crypto' or the surface's card word; undefined for anything else. */
export function railName<C extends 'card' | 'fiat'>(raw: string, cardWord: C): 'crypto' | C | undefined {
  if (raw === 'crypto') return 'crypto';
  return (CARD_RAIL_NAMES as readonly string[]).includes(raw) ? cardWord : undefined;
}

/**
 * `"crypto,card"` (or `"crypto,fiat"`) → ['crypto', cardWord], in the order given (the order the
 * payer is offered them); default ['crypto']; no unknown, empty or repeated rails (`card,fiat` is
 * the same rail twice).
 */
export function parseRailList<C extends 'card' | 'fiat'>(raw: string | undefined, cardWord: C): ('crypto' | C)[] | Refusal {
  if (raw === undefined || raw === '') return ['crypto'];
  const out: ('crypto' | C)[] = [];
  for (const p of raw.split(',').map((x) => x.trim())) {
    const name = railName(p, cardWord);
    if (!name) return refuse('payment_rails', `payment_rails must be a comma-joined list of crypto and ${cardWord} (or its other name, ${cardWord === 'card' ? 'fiat' : 'card'}), e.g. "crypto,${cardWord}"`);
    if (out.includes(name)) return refuse('payment_rails', name === 'crypto' ? 'payment_rails lists crypto twice' : `payment_rails lists the card rail twice (card and fiat are its two names)`);
    out.push(name);
  }
  return out;
}

/**
 * Supported fiat currencies (ISO 4217) with their minor units, the number of fraction digits a
 * `fiat_amount` may carry. Card processors settle these; a currency outside the list is refused
 * rather than guessed (JPY has 0 minor units, KWD 3: "10.5" JPY is not an amount).
 */
export const FIAT_CURRENCIES: Readonly<Record<string, number>> = Object.freeze({
  USD: 2,
  EUR: 2,
  GBP: 2,
  JPY: 0,
  CHF: 2,
  CAD: 2,
  AUD: 2,
  NZD: 2,
  SGD: 2,
  HKD: 2,
  CNY: 2,
  KRW: 0,
  INR: 2,
  BRL: 2,
  MXN: 2,
  SEK: 2,
  NOK: 2,
  DKK: 2,
  PLN: 2,
  CZK: 2,
  ZAR: 2,
  AED: 2,
  KWD: 3,
  BHD: 3,
});

/** The largest decimal string we parse; far above any real price, far below BigInt's slow zone. */
const MAX_DECIMAL_LENGTH = 100;

/**
 * A positive decimal string with at most `decimals` fraction digits, as smallest units.
 * `param` names the field in the refusal.
 */
export function parsePositiveDecimal(raw: string, decimals: number, param: string, what = param): bigint | Refusal {
  if (raw.length > MAX_DECIMAL_LENGTH) return refuse(param, `${what} is too long`, 'invalid_amount');
  let v: bigint;
  try {
    v = parseDecimal(raw, decimals);
  } catch (err) {
    if (!(err instanceof MoneyError)) throw err;
    if (err.code === 'too_many_fraction_digits') return refuse(param, `${what} has more than ${decimals} fraction digits`, 'invalid_amount');
    if (err.code === 'out_of_range') return refuse(param, `${what} is out of range`, 'invalid_amount');
    return refuse(param, `${what} must be a decimal string such as "9.99" (digits, optionally "." and digits)`, 'invalid_amount');
  }
  if (v <= 0n) return refuse(param, `${what} must be positive`, 'invalid_amount');
  return v;
}

/** Fraction digits of a decimal string ("9.990" → 3). */
const fractionDigits = (s: string): number => (s.includes('.') ? s.length - s.indexOf('.') - 1 : 0);

/** `fiat_currency` (case-insensitive input, stored upper-case) with its minor units. */
export function parseFiatCurrency(raw: string): { code: string; minorUnits: number } | Refusal {
  const code = raw.toUpperCase();
  const minorUnits = /^[A-Z]{3}$/.test(code) ? FIAT_CURRENCIES[code] : undefined;
  if (minorUnits === undefined) {
    return refuse('fiat_currency', `fiat_currency must be one of ${Object.keys(FIAT_CURRENCIES).join(', ')}`);
  }
  return { code, minorUnits };
}

/**
 * U+0000 (PostgreSQL text and jsonb cannot hold it) or an unpaired UTF-16 surrogate (jsonb refuses
 * its `\ud800` escape, text would silently turn it into U+FFFD). The raw `*_json` string can look
 * clean (`gift\\u0000wrap` is six harmless characters) while its decoded JSON holds one: the
 * decoded strings and keys are what get stored, so they are what is checked.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what PostgreSQL text cannot store
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export function hasUnstorableText(s: string): boolean {
  return UNSTORABLE.test(s);
}

/** The refusal of a decoded `*_json` value holding text the database cannot store, if any. */
function refuseUnstorable(param: string, v: unknown): Refusal | undefined {
  // The parsers below only accept flat objects or arrays of flat objects: two levels suffice, and
  // deeper values are refused by them anyway.
  const visit = (x: unknown, depth: number): boolean => {
    if (typeof x === 'string') return hasUnstorableText(x);
    if (typeof x !== 'object' || x === null || depth > 2) return false;
    return Object.entries(x).some(([k, y]) => hasUnstorableText(k) || visit(y, depth + 1));
  };
  return visit(v, 0) ? refuse(param, `${param} must not contain U+0000 or unpaired surrogates (\\u0000, \\ud800) in its decoded text`) : undefined;
}

const MAX_LINE_ITEMS = 100;
const MAX_LINE_ITEM_NAME = 200;
/** Large enough for any cart, small enough that amount × quantity stays a cheap bigint product. */
const MAX_QUANTITY = 1_000_000_000;

/**
 * One line item. `amount` is the price of ONE unit (Stripe's `unit_amount`, and what the
 * interface's sample `{ name, quantity: 1, amount: "9.99" }` shows): the line total is
 * amount × quantity.
 */
export interface LineItem {
  name: string;
  quantity: number;
  amount?: string;
}

const LINE_ITEM_FIELDS = new Set(['name', 'quantity', 'amount']);

/**
 * Parses `line_items_json` (the array serialized once into a string) and, when EVERY item carries
 * an amount, checks sum(amount × quantity) = `total` exactly, in decimal arithmetic at the largest
 * scale present (no float, no rounding). Items without amounts are display-only, so a cart that
 * mixes both is accepted without a sum check. Unknown item fields are refused: the items are shown
 * publicly, and silently dropping a field the merchant thought it stored is worse than a 400.
 */
export function parseLineItems(raw: string, total: { value: string; param: string } | undefined): LineItem[] | Refusal {
  const param = 'line_items_json';
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return refuse(param, 'line_items_json must be a JSON array serialized into a string');
  }
  const bad = refuseUnstorable(param, v);
  if (bad) return bad;
  if (!Array.isArray(v)) return refuse(param, 'line_items_json must encode a JSON array of items');
  if (v.length > MAX_LINE_ITEMS) return refuse(param, `line_items_json has more than ${MAX_LINE_ITEMS} items`);
  const items: LineItem[] = [];
  for (const [i, it] of v.entries()) {
    const at = `line item ${i}`;
    if (typeof it !== 'object' || it === null || Array.isArray(it)) return refuse(param, `${at} must be an object`);
    const o = it as Record<string, unknown>;
    const extra = Object.keys(o).find((k) => !LINE_ITEM_FIELDS.has(k));
    if (extra !== undefined) return refuse(param, `${at} has an unknown field (allowed: name, quantity, amount)`);
    if (typeof o.name !== 'string' || o.name.trim().length < 1 || o.name.length > MAX_LINE_ITEM_NAME) {
      return refuse(param, `${at}: name must be a string of 1 to ${MAX_LINE_ITEM_NAME} characters`);
    }
    if (typeof o.quantity !== 'number' || !Number.isInteger(o.quantity) || o.quantity < 1 || o.quantity > MAX_QUANTITY) {
      return refuse(param, `${at}: quantity must be an integer from 1 to ${MAX_QUANTITY}`);
    }
    const item: LineItem = { name: o.name, quantity: o.quantity };
    if (o.amount !== undefined) {
      if (typeof o.amount !== 'string') return refuse(param, `${at}: amount must be a decimal string such as "9.99"`, 'invalid_amount');
      // Zero is allowed (a free item in the cart); the scale is checked by the sum below.
      const ok = o.amount.length <= MAX_DECIMAL_LENGTH && /^[0-9]+(\.[0-9]+)?$/.test(o.amount);
      if (!ok) return refuse(param, `${at}: amount must be a decimal string such as "9.99"`, 'invalid_amount');
      item.amount = o.amount;
    }
    items.push(item);
  }
  if (total && items.length > 0 && items.every((x) => x.amount !== undefined)) {
    const scale = Math.max(fractionDigits(total.value), ...items.map((x) => fractionDigits(x.amount!)));
    const sum = items.reduce((acc, x) => acc + parseDecimal(x.amount!, scale) * BigInt(x.quantity), 0n);
    if (sum !== parseDecimal(total.value, scale)) {
      return refuse(param, `line item amounts × quantities add up to a different total than ${total.param}`, 'invalid_amount');
    }
  }
  return items;
}

const MAX_METADATA_KEYS = 50;
const MAX_METADATA_KEY_LENGTH = 40;
const MAX_METADATA_STRING_LENGTH = 500;
/** Keys Tollgate may add to metadata later; refused now so they can never clash with merchant keys. */
const RESERVED_METADATA_PREFIX = 'tollgate';

export type MetadataValue = string | number | boolean | null;

/**
 * Parses a metadata object (`public_metadata_json` / `private_metadata_json`). Flat, like Stripe's
 * metadata: at most 50 keys of 1–40 characters; values are strings of at most 500 characters,
 * booleans, null, or numbers. Numbers must survive the JSON round trip: integers beyond 2^53 are
 * refused (JSON.parse would silently change them; send such ids as strings). Nested objects and
 * arrays are refused: a dashboard or a receipt can show a flat map, not a tree. Keys starting with
 * `tollgate` (any case) are reserved.
 */
export function parseMetadata(raw: string, param: string): Record<string, MetadataValue> | Refusal {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return refuse(param, `${param} must be a JSON object serialized into a string`);
  }
  const bad = refuseUnstorable(param, v);
  if (bad) return bad;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return refuse(param, `${param} must encode a JSON object`);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_METADATA_KEYS) return refuse(param, `${param} has more than ${MAX_METADATA_KEYS} keys`);
  // Null prototype: a key named __proto__ stays data.
  const out: Record<string, MetadataValue> = Object.create(null);
  for (const [k, val] of entries) {
    if (k.length < 1 || k.length > MAX_METADATA_KEY_LENGTH) return refuse(param, `${param}: keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters`);
    if (k.toLowerCase().startsWith(RESERVED_METADATA_PREFIX)) return refuse(param, `${param}: keys starting with "${RESERVED_METADATA_PREFIX}" are reserved`);
    if (typeof val === 'string') {
      if (val.length > MAX_METADATA_STRING_LENGTH) return refuse(param, `${param}: value of "${k}" is longer than ${MAX_METADATA_STRING_LENGTH} characters`);
    } else if (typeof val === 'number') {
      if (Number.isInteger(val) && !Number.isSafeInteger(val)) return refuse(param, `${param}: value of "${k}" is an integer beyond 2^53; send it as a string`);
    } else if (typeof val !== 'boolean' && val !== null) {
      return refuse(param, `${param}: value of "${k}" must be a string, number, boolean or null (no nested objects or arrays)`);
    }
    out[k] = val as MetadataValue;
  }
  return { ...out };
}
