// Hosted quick-pay, merchant side: products, payment links and the sessions payers open on them
// (`/api/v1/products`, `/api/v1/payment-links`). Reached as `tollgate.quickpay`. Parameters are
// camelCase and map 1:1 onto the wire fields; records keep their wire (snake_case) names, like every
// record of this SDK. Reads are retried, writes never are (an unknown outcome of a create throws
// TollgateUnknownOutcomeError: list before creating again).
import type { Transport } from './transport.ts';
import { absent, decimalString, fail, objectWith, pathSegment, str } from './wire.ts';
import type { CallOptions, QuickPayStatus } from './types.ts';

/** A product: what a fixed-price link sells, at a server-owned price. */
export interface Product {
  product_id: string;
  name: string;
  description?: string;
  image_url?: string;
  /** crypto price, decimal string in stablecoin units (converted exactly per token) */
  price?: string;
  /** card price (with fiat_amount); never a conversion of `price` */
  fiat_currency?: string;
  fiat_amount?: string;
  /** units left to sell across the product's links; absent = unlimited */
  inventory?: number;
  active: boolean;
  created_at: string;
}

/** `createProduct` parameters (`updateProduct` takes the same, all optional). */
export interface CreateProductParams {
  name: string;
  description?: string | undefined;
  /** https URL shown on the hosted page */
  imageUrl?: string | undefined;
  /** decimal string such as "9.99" (never a number); "" removes it on update */
  price?: string | undefined;
  /** ISO 4217, with `fiatAmount`: the card price */
  fiatCurrency?: string | undefined;
  fiatAmount?: string | undefined;
  /** units available; -1 = unlimited (the default) */
  inventory?: number | undefined;
  active?: boolean | undefined;
}
export type UpdateProductParams = Partial<CreateProductParams>;

/** A payment link: a shareable page that sells one product, or takes any amount within bounds. */
export interface PaymentLink {
  link_id: string;
  /** the hosted page: share it */
  url: string;
  /** the signed agent manifest (JSON) of the link */
  manifest_url: string;
  product_id?: string;
  min_amount?: string;
  max_amount?: string;
  payment_rails: string[];
  /** chain/token pairs offered; empty = every wallet of the merchant */
  options: { chain_id: number; token_symbol: string }[];
  max_payments?: number;
  /** Unix seconds */
  expires_at?: number;
  active: boolean;
  created_at: string;
}

/** `createPaymentLink` parameters: `productId` for a fixed price, or `minAmount` + `maxAmount`. */
export interface CreatePaymentLinkParams {
  productId?: string | undefined;
  /** any-amount links: decimal strings */
  minAmount?: string | undefined;
  maxAmount?: string | undefined;
  /** e.g. ['crypto', 'card'] (sent comma-joined); default crypto */
  paymentRails?: readonly string[] | undefined;
  /** chain/token pairs from the merchant's wallets (sent as "2345:USDC,1:USDT"); default every wallet */
  options?: readonly { chainId: number; tokenSymbol: string }[] | undefined;
  /** sessions paid or still payable at most; -1 = unlimited (the default) */
  maxPayments?: number | undefined;
  /** Unix seconds (or a Date); 0 removes the expiry on update */
  expiresAt?: number | Date | undefined;
  active?: boolean | undefined;
}
/** What an existing link can change: its limits, its expiry and whether it is active. */
export type UpdatePaymentLinkParams = Pick<CreatePaymentLinkParams, 'maxPayments' | 'expiresAt' | 'active'>;

/**
 * A session a payer opened on a link, as its merchant sees it. `status`: OPEN, PAYMENT_CONFIRMED
 * (crypto: its order is PAYMENT_CONFIRMED or INVOICED), COMPLETED (card: its order is INVOICED),
 * EXPIRED or FAILED. Fulfil from the order (`order_status` INVOICED, or `getOrderStatus`), and for
 * an any-amount link reconcile `amount_paid_wei` and `memo`: confirmation proves only what was paid.
 */
export interface PaymentLinkSession {
  session_id: string;
  status: QuickPayStatus | (string & {});
  rail: string;
  /** the amount asked (decimal string) */
  amount: string;
  /** the payer's reference */
  memo?: string;
  chain_id?: number;
  token_symbol?: string;
  from_address?: string;
  order_id?: string;
  order_status?: string;
  tx_hash?: string;
  /** what arrived, in the token's smallest unit */
  amount_paid_wei?: string;
  completed_at?: string;
  created_at: string;
}

/** List options: `limit` 1 to 100 (default 50), newest first. */
export interface ListOptions extends CallOptions {
  limit?: number | undefined;
}

const PRODUCT = objectWith<Product>({ product_id: 'string', name: 'string' });
const LINK = objectWith<PaymentLink>({ link_id: 'string', url: 'string' });
const list = <T>() => objectWith<{ data: T[] }>({ data: 'object' });

function integer(param: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) fail(param, `an integer ≥ ${min}`, v);
  return v;
}
function bool(param: string, v: unknown): boolean {
  if (typeof v !== 'boolean') fail(param, 'a boolean', v);
  return v;
}

/**
 * The wire body of `POST /api/v1/products` (and of an update, where every field is optional).
 *
 * @example productBody({ name: 'Mug', price: '12.00', fiatCurrency: 'EUR', fiatAmount: '11.00' })
 * // => { name: 'Mug', price: '12.00', fiat_currency: 'EUR', fiat_amount: '11.00' }
 */
export function productBody(p: UpdateProductParams, create = false): Record<string, string | number | boolean> {
  if (typeof p !== 'object' || p === null) fail('product params', 'an object', p);
  const b: Record<string, string | number | boolean> = {};
  if (create || !absent(p.name)) b.name = str('name', p.name);
  if (!absent(p.description)) b.description = str('description', p.description);
  if (!absent(p.imageUrl)) b.image_url = str('imageUrl', p.imageUrl);
  if (!absent(p.price)) b.price = p.price === '' && !create ? '' : decimalString('price', p.price);
  if (!absent(p.fiatCurrency)) b.fiat_currency = str('fiatCurrency', p.fiatCurrency);
  if (!absent(p.fiatAmount)) b.fiat_amount = decimalString('fiatAmount', p.fiatAmount);
  if (!absent(p.inventory)) b.inventory = integer('inventory', p.inventory, -1);
  if (!absent(p.active)) b.active = bool('active', p.active);
  return b;
}

/**
 * The wire body of `POST /api/v1/payment-links`: lists travel comma-joined (never JSON arrays).
 *
 * @example paymentLinkBody({ minAmount: '1', maxAmount: '50', options: [{ chainId: 2345, tokenSymbol: 'USDC' }] })
 * // => { min_amount: '1', max_amount: '50', options: '2345:USDC' }
 */
export function paymentLinkBody(p: CreatePaymentLinkParams): Record<string, string | number | boolean> {
  if (typeof p !== 'object' || p === null) fail('payment link params', 'an object', p);
  const b: Record<string, string | number | boolean> = {};
  if (!absent(p.productId)) b.product_id = str('productId', p.productId);
  if (!absent(p.minAmount)) b.min_amount = decimalString('minAmount', p.minAmount);
  if (!absent(p.maxAmount)) b.max_amount = decimalString('maxAmount', p.maxAmount);
  if (!absent(p.paymentRails)) {
    const rails: unknown = p.paymentRails;
    if (!Array.isArray(rails) || rails.length === 0 || !rails.every((r) => typeof r === 'string' && /^[a-z_]+$/.test(r))) fail('paymentRails', "a non-empty array such as ['crypto', 'card']", rails);
    b.payment_rails = rails.join(',');
  }
  if (!absent(p.options)) {
    const opts: unknown = p.options;
    if (!Array.isArray(opts) || opts.length === 0) fail('options', 'a non-empty array of { chainId, tokenSymbol }', opts);
    b.options = opts
      .map(
        (o: { chainId?: unknown; tokenSymbol?: unknown }, i) =>
          `${integer(`options[${i}].chainId`, o?.chainId, 1)}:${/^[A-Za-z0-9.]{1,11}$/.test(String(o?.tokenSymbol)) ? String(o.tokenSymbol) : fail(`options[${i}].tokenSymbol`, 'a token symbol', o?.tokenSymbol)}`,
      )
      .join(',');
  }
  Object.assign(b, paymentLinkLimits(p));
  return b;
}

function paymentLinkLimits(p: UpdatePaymentLinkParams): Record<string, number | boolean> {
  const b: Record<string, number | boolean> = {};
  if (!absent(p.maxPayments)) b.max_payments = integer('maxPayments', p.maxPayments, -1);
  if (!absent(p.expiresAt)) b.expires_at = p.expiresAt instanceof Date ? Math.floor(p.expiresAt.getTime() / 1000) : integer('expiresAt', p.expiresAt, 0);
  if (!absent(p.active)) b.active = bool('active', p.active);
  return b;
}

function listQuery(o: ListOptions): Record<string, string> | undefined {
  if (absent(o.limit)) return undefined;
  const n = integer('limit', o.limit, 1);
  if (n > 100) fail('limit', 'an integer from 1 to 100', n);
  return { limit: String(n) };
}
const callOpts = ({ signal, timeoutMs }: CallOptions) => ({ ...(signal ? { signal } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) });

/** `tollgate.quickpay`: the merchant API of hosted quick-pay. */
export class QuickPayClient {
  readonly #t: Transport;

  /** @internal built by TollgateClient */
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Creates a product (`POST /api/v1/products`). Prices are decimal strings; the card price is
   * its own (`fiatCurrency` + `fiatAmount`), never converted. Never retried.
   *
   * @example
   * const mug = await tollgate.quickpay.createProduct({ name: 'Mug', price: '12.00', fiatCurrency: 'EUR', fiatAmount: '11.00', inventory: 40 });
   */
  async createProduct(params: CreateProductParams, opts: CallOptions = {}): Promise<Product> {
    return this.#t.call({ method: 'POST', path: '/api/v1/products', body: productBody(params, true), auth: 'merchant', safe: false, expect: 200, check: PRODUCT, ...callOpts(opts) });
  }

  /** Changes a product (`POST /api/v1/products/{id}`): only the fields given. Never retried. */
  async updateProduct(productId: string, params: UpdateProductParams, opts: CallOptions = {}): Promise<Product> {
    const path = `/api/v1/products/${pathSegment('productId', productId)}`;
    return this.#t.call({ method: 'POST', path, body: productBody(params), auth: 'merchant', safe: false, expect: 200, check: PRODUCT, ...callOpts(opts) });
  }

  /** Reads a product (`GET /api/v1/products/{id}`); another merchant's is a 404 `product_not_found`. */
  async getProduct(productId: string, opts: CallOptions = {}): Promise<Product> {
    return this.#t.call({ method: 'GET', path: `/api/v1/products/${pathSegment('productId', productId)}`, auth: 'merchant', safe: true, expect: 200, check: PRODUCT, ...callOpts(opts) });
  }

  /** The merchant's products, newest first (`GET /api/v1/products`). */
  async listProducts(opts: ListOptions = {}): Promise<{ data: Product[] }> {
    return this.#t.call({ method: 'GET', path: '/api/v1/products', query: listQuery(opts), auth: 'merchant', safe: true, expect: 200, check: list<Product>(), ...callOpts(opts) });
  }

  /**
   * Creates a payment link (`POST /api/v1/payment-links`): share `url`. Never retried.
   *
   * @example
   * const link = await tollgate.quickpay.createPaymentLink({ productId: mug.product_id, paymentRails: ['crypto', 'card'], maxPayments: 40 });
   * const tips = await tollgate.quickpay.createPaymentLink({ minAmount: '1', maxAmount: '50' }); // any amount
   */
  async createPaymentLink(params: CreatePaymentLinkParams, opts: CallOptions = {}): Promise<PaymentLink> {
    return this.#t.call({ method: 'POST', path: '/api/v1/payment-links', body: paymentLinkBody(params), auth: 'merchant', safe: false, expect: 200, check: LINK, ...callOpts(opts) });
  }

  /** Changes a link's limits, expiry or activity (`POST /api/v1/payment-links/{id}`); what it sells never changes. */
  async updatePaymentLink(linkId: string, params: UpdatePaymentLinkParams, opts: CallOptions = {}): Promise<PaymentLink> {
    const path = `/api/v1/payment-links/${pathSegment('linkId', linkId)}`;
    return this.#t.call({ method: 'POST', path, body: paymentLinkLimits(params), auth: 'merchant', safe: false, expect: 200, check: LINK, ...callOpts(opts) });
  }

  /** Deactivates a link: no new sessions; sessions already open can still be paid. */
  async deactivatePaymentLink(linkId: string, opts: CallOptions = {}): Promise<PaymentLink> {
    return this.updatePaymentLink(linkId, { active: false }, opts);
  }

  /** Reads a link (`GET /api/v1/payment-links/{id}`); another merchant's is a 404 `link_not_found`. */
  async getPaymentLink(linkId: string, opts: CallOptions = {}): Promise<PaymentLink> {
    return this.#t.call({ method: 'GET', path: `/api/v1/payment-links/${pathSegment('linkId', linkId)}`, auth: 'merchant', safe: true, expect: 200, check: LINK, ...callOpts(opts) });
  }

  /** The merchant's links, newest first (`GET /api/v1/payment-links`). */
  async listPaymentLinks(opts: ListOptions = {}): Promise<{ data: PaymentLink[] }> {
    return this.#t.call({ method: 'GET', path: '/api/v1/payment-links', query: listQuery(opts), auth: 'merchant', safe: true, expect: 200, check: list<PaymentLink>(), ...callOpts(opts) });
  }

  /**
   * The sessions payers opened on a link, newest first, with their orders
   * (`GET /api/v1/payment-links/{id}/sessions`).
   *
   * @example
   * const { data } = await tollgate.quickpay.listPaymentLinkSessions(link.link_id);
   * for (const s of data) if (s.order_status === 'INVOICED') await fulfilOnce(s.order_id, s.amount_paid_wei, s.memo);
   */
  async listPaymentLinkSessions(linkId: string, opts: ListOptions = {}): Promise<{ data: PaymentLinkSession[] }> {
    const path = `/api/v1/payment-links/${pathSegment('linkId', linkId)}/sessions`;
    return this.#t.call({ method: 'GET', path, query: listQuery(opts), auth: 'merchant', safe: true, expect: 200, check: list<PaymentLinkSession>(), ...callOpts(opts) });
  }
}
