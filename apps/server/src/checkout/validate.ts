import { isRefusal, parseFiatCurrency, parseLineItems, parseMetadata, parsePositiveDecimal, parseRailList, refuse, type LineItem, type MetadataValue, type Refusal } from './fields.ts';
import { isReturnUrlAllowed, returnUrlProblem } from './return-urls.ts';

/**
 * The rules of `POST /api/v1/checkout/sessions` (docs/migrating.md lists its fields),
 * as one pure function from the request body and the merchant's configuration to the session to
 * store, or the first refusal. The route validated the JSON types already (TypeBox schema); this
 * checks meaning, in the order of the interface's table so the first error is predictable.
 */

const PAYMENT_RAILS = ['crypto', 'fiat'] as const;
export type PaymentRail = (typeof PAYMENT_RAILS)[number];

/** `expires_in` is clamped into this range; the returned `expires_at` is authoritative. */
const MIN_EXPIRES_IN = 300;
const MAX_EXPIRES_IN = 86_400;
const DEFAULT_EXPIRES_IN = 3600;
const MAX_CLIENT_REFERENCE_ID = 200;

/** The create body as the route's schema types it (snake_case wire names). */
export interface CreateSessionBody {
  checkout_type: string;
  payment_rails?: string | undefined;
  price?: string | undefined;
  fiat_currency?: string | undefined;
  fiat_amount?: string | undefined;
  client_reference_id?: string | undefined;
  expires_in?: number | undefined;
  line_items_json?: string | undefined;
  public_metadata_json?: string | undefined;
  private_metadata_json?: string | undefined;
  success_url?: string | undefined;
  cancel_url?: string | undefined;
  /** Accepted and ignored: the merchant is the API key's. */
  merchant_id?: string | undefined;
  /**
   * The fields of a DELEGATE session as GOAT Network's server SDK sends them
   * (`createDelegateCheckoutSession`): accepted by the schema so the refusal can say why.
   */
  chain_id?: number | undefined;
  fixed_amount_wei?: string | undefined;
  callback_calldata?: string | undefined;
  acceptable_tokens?: string | undefined;
}

/** Body fields that only a DELEGATE session has. */
const DELEGATE_ONLY = ['chain_id', 'fixed_amount_wei', 'callback_calldata', 'acceptable_tokens'] as const;

/** What the merchant's configuration contributes. */
export interface MerchantContext {
  cardEnabled: boolean;
  returnUrls: readonly string[];
  /** The merchant's receiving wallets with their configured token metadata. */
  wallets: readonly { chain_id: number; token_symbol: string; token_contract: string; decimals: number }[];
}

export interface PaymentOption {
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
  /** `price` in this token's smallest unit, as an integer string. */
  amount_wei: string;
}

export interface SessionDraft {
  checkoutType: 'DIRECT';
  paymentRails: PaymentRail[];
  price: string | undefined;
  fiatCurrency: string | undefined;
  fiatAmount: string | undefined;
  clientReferenceId: string | undefined;
  expiresAt: Date;
  lineItems: LineItem[];
  publicMetadata: Record<string, MetadataValue>;
  privateMetadata: Record<string, MetadataValue>;
  successUrl: string | undefined;
  cancelUrl: string | undefined;
  paymentOptions: PaymentOption[];
}

export type DraftOutcome = { kind: 'ok'; draft: SessionDraft } | Refusal;

/** The empty string is "absent" on this interface: signing drops it (docs/authentication.md, step 4). */
const present = (s: string | undefined): s is string => s !== undefined && s !== '';

/** `"crypto,fiat"` (or `"crypto,card"`) → ['crypto', 'fiat']; default crypto (fields.ts `parseRailList`). */
export function parsePaymentRails(raw: string | undefined): PaymentRail[] | Refusal {
  return parseRailList(raw, 'fiat');
}

/** Clamps a requested lifetime into [MIN_EXPIRES_IN, MAX_EXPIRES_IN] (default DEFAULT_EXPIRES_IN). */
export function clampExpiresIn(requested: number | undefined): number {
  if (requested === undefined) return DEFAULT_EXPIRES_IN;
  return Math.min(MAX_EXPIRES_IN, Math.max(MIN_EXPIRES_IN, requested));
}

/**
 * Builds the session to store, or the first refusal.
 *
 * @example
 * draftSession({ checkout_type: 'DIRECT', price: '9.99' }, merchant, Date.now())
 * // => { kind: 'ok', draft: { paymentRails: ['crypto'], paymentOptions: [{ …, amount_wei: '9990000' }], … } }
 */
export function draftSession(b: CreateSessionBody, m: MerchantContext, nowMs: number): DraftOutcome {
  // Public checkout sessions are DIRECT (docs/migrating.md). A DELEGATE session would let an anonymous
  // page holder bind any payer to calldata the payer must sign and the merchant's adapter acts on;
  // DELEGATE payments go through an order with callback_calldata instead (docs/migrating.md).
  if (b.checkout_type === 'DELEGATE') {
    return refuse('checkout_type', 'DELEGATE checkout sessions are not offered: create an order with callback_calldata (POST /api/v1/orders) instead', 'delegate_checkout_unsupported');
  }
  if (b.checkout_type !== 'DIRECT') return refuse('checkout_type', 'checkout_type must be DIRECT');
  const delegateField = DELEGATE_ONLY.find((k) => b[k] !== undefined);
  if (delegateField) return refuse(delegateField, `${delegateField} belongs to DELEGATE checkout sessions, which are not offered; a DIRECT session takes price`);

  const rails = parsePaymentRails(b.payment_rails);
  if (isRefusal(rails)) return rails;
  const crypto = rails.includes('crypto');
  const fiat = rails.includes('fiat');
  if (fiat && !m.cardEnabled) {
    return refuse('payment_rails', 'the fiat rail needs the card rail, which is not enabled for this merchant', 'rail_not_enabled');
  }

  // Crypto: the price, converted exactly into every accepted token's smallest unit.
  const paymentOptions: PaymentOption[] = [];
  if (crypto) {
    if (!present(b.price)) return refuse('price', 'price is required when crypto is offered', 'invalid_amount');
    if (m.wallets.length === 0) return refuse('payment_rails', 'the merchant has no receiving wallet, so crypto cannot be offered', 'wallet_not_found');
    // Exactly, per token, by string (never through a float): a price the token cannot represent
    // is refused rather than rounded.
    for (const w of m.wallets) {
      const units = parsePositiveDecimal(b.price, w.decimals, 'price');
      if (isRefusal(units)) return { ...units, message: `${units.message} (${w.token_symbol} on chain ${w.chain_id} has ${w.decimals} decimals)` };
      paymentOptions.push({ chain_id: w.chain_id, token_symbol: w.token_symbol, token_contract: w.token_contract, decimals: w.decimals, amount_wei: units.toString() });
    }
  } else if (present(b.price)) {
    return refuse('price', 'price is only accepted when crypto is offered (card-only sessions use fiat_amount)');
  }

  // Fiat: currency and amount together, only with the fiat rail.
  let fiatCurrency: string | undefined;
  if (fiat) {
    if (!present(b.fiat_currency)) return refuse('fiat_currency', 'fiat_currency is required with the fiat rail');
    const cur = parseFiatCurrency(b.fiat_currency);
    if (isRefusal(cur)) return cur;
    if (!present(b.fiat_amount)) return refuse('fiat_amount', 'fiat_amount is required with the fiat rail', 'invalid_amount');
    const amt = parsePositiveDecimal(b.fiat_amount, cur.minorUnits, 'fiat_amount');
    if (isRefusal(amt)) return { ...amt, message: `${amt.message} (${cur.code} has ${cur.minorUnits} minor units)` };
    fiatCurrency = cur.code;
  } else {
    if (present(b.fiat_currency)) return refuse('fiat_currency', 'fiat_currency is only accepted with the fiat rail');
    if (present(b.fiat_amount)) return refuse('fiat_amount', 'fiat_amount is only accepted with the fiat rail');
  }

  const ref = b.client_reference_id?.trim();
  if (ref !== undefined && ref.length > MAX_CLIENT_REFERENCE_ID) {
    return refuse('client_reference_id', `client_reference_id must be at most ${MAX_CLIENT_REFERENCE_ID} characters after trimming`);
  }

  const expiresAt = new Date((Math.floor(nowMs / 1000) + clampExpiresIn(b.expires_in)) * 1000);

  // Line items add up to the price of the session: the crypto price, or the fiat amount of a
  // card-only session (the only amount such a session has).
  let lineItems: LineItem[] = [];
  if (present(b.line_items_json)) {
    const total = crypto ? { value: b.price!, param: 'price' } : { value: b.fiat_amount!, param: 'fiat_amount' };
    const items = parseLineItems(b.line_items_json, total);
    if (isRefusal(items)) return items;
    lineItems = items;
  }
  let publicMetadata: Record<string, MetadataValue> = {};
  if (present(b.public_metadata_json)) {
    const md = parseMetadata(b.public_metadata_json, 'public_metadata_json');
    if (isRefusal(md)) return md;
    publicMetadata = md;
  }
  let privateMetadata: Record<string, MetadataValue> = {};
  if (present(b.private_metadata_json)) {
    const md = parseMetadata(b.private_metadata_json, 'private_metadata_json');
    if (isRefusal(md)) return md;
    privateMetadata = md;
  }

  for (const param of ['success_url', 'cancel_url'] as const) {
    const url = b[param];
    if (!present(url)) continue;
    const problem = returnUrlProblem(url);
    if (problem) return refuse(param, `${param} ${problem}`);
    if (!isReturnUrlAllowed(url, m.returnUrls)) {
      return refuse(param, `${param} does not match the merchant's return-URL allowlist`, 'return_url_not_allowed');
    }
  }

  return {
    kind: 'ok',
    draft: {
      checkoutType: 'DIRECT',
      paymentRails: rails,
      price: crypto ? b.price : undefined,
      fiatCurrency,
      fiatAmount: fiat ? b.fiat_amount : undefined,
      clientReferenceId: ref ? ref : undefined,
      expiresAt,
      lineItems,
      publicMetadata,
      privateMetadata,
      successUrl: present(b.success_url) ? b.success_url : undefined,
      cancelUrl: present(b.cancel_url) ? b.cancel_url : undefined,
      paymentOptions,
    },
  };
}
