// The public quick-pay calls and shapes (apps/server/src/quickpay/routes). URLs are relative to the
// page (`/quickpay/pay/<link id>`), so a deployment behind a path prefix works unchanged.
import { ApiError, type Fetch } from './api.ts';
import type { LinkState, QuickPayStatus } from '@tollgate/protocol/states';
import type { TestCard, TestCardResult } from './types.ts';
import { clockOffsetMs } from './countdown.ts';

export interface QuickPayOption {
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
  /** fixed-price links: the price in this token's smallest unit */
  amount_wei?: string;
  chain_name?: string;
  explorer_url?: string;
}

export interface PublicLink {
  link_id: string;
  state: LinkState;
  kind: 'fixed' | 'any_amount';
  url: string;
  merchant: { merchant_id: string; name: string; logo_url?: string };
  product?: { name: string; description?: string; image_url?: string };
  price?: string;
  /** the card price, when the link offers `card` */
  fiat_currency?: string;
  fiat_amount?: string;
  min_amount?: string;
  max_amount?: string;
  payment_rails: string[];
  payment_options: QuickPayOption[];
}

export interface QuickPaySession {
  session_id: string;
  status: QuickPayStatus;
  amount?: string;
  rail?: string;
  /** crypto terms, or card terms (checkout_id, processor, currency, amount) on a card session */
  terms?: {
    order_id: string;
    chain_id: number;
    token_symbol: string;
    token_contract: string;
    decimals: number;
    pay_to_address: string;
    amount_wei: string;
    expires_at: number;
    processor?: string;
    currency?: string;
    amount?: string;
    payment_state?: string;
    next_action?: { type: string; url?: string };
    payment_url?: string;
  };
  order_id?: string;
  order_status?: string;
  tx_hash?: string;
}

export interface QuickPayApi {
  link(): Promise<PublicLink>;
  open(body: Record<string, unknown>): Promise<QuickPaySession>;
  session(id: string): Promise<QuickPaySession>;
  /** TEST processor: pays a card session's order with a test card (the number goes only to this origin). */
  testCard(id: string, card: TestCard): Promise<TestCardResult>;
  readonly clockOffset: number;
}

/** A client for one link. @example const api = quickpayApi(location.href, 'pl_…') */
export function quickpayApi(base: string, linkId: string, fetchFn: Fetch = (u, i) => fetch(u, i)): QuickPayApi {
  const root = new URL('../v1/', base).toString();
  let offset = 0;
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetchFn(root + path, {
        method,
        credentials: 'omit',
        cache: 'no-store',
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'network_error', 'The payment service could not be reached.');
    }
    offset = clockOffsetMs(res.headers.get('date'), Date.now()) || offset;
    const data = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!res.ok) {
      const ra = Number(res.headers.get('retry-after'));
      throw new ApiError(
        res.status,
        typeof data?.code === 'string' ? data.code : `http_${res.status}`,
        typeof data?.error === 'string' ? data.error : `HTTP ${res.status}`,
        Number.isFinite(ra) && ra > 0 ? ra : undefined,
        typeof data?.param === 'string' ? data.param : undefined,
      );
    }
    if (data === undefined) throw new ApiError(res.status, 'invalid_response', 'The payment service sent an unreadable answer.');
    return data as T;
  }
  const link = `links/${encodeURIComponent(linkId)}`;
  return {
    link: () => call<PublicLink>('GET', link),
    open: (b) => call<QuickPaySession>('POST', `${link}/sessions`, b),
    session: (id) => call<QuickPaySession>('GET', `sessions/${encodeURIComponent(id)}`),
    testCard: (id, c) => call<TestCardResult>('POST', `sessions/${encodeURIComponent(id)}/card/test-payment`, c),
    get clockOffset() {
      return offset;
    },
  };
}

/** The link id of the page path `/quickpay/pay/<id>`. @example linkIdFromPath('/quickpay/pay/pl_9x') // => 'pl_9x' */
export function linkIdFromPath(path: string): string | undefined {
  const id = path.split('/').filter(Boolean).pop() ?? '';
  return /^pl_[A-Za-z0-9]{1,100}$/.test(id) ? id : undefined;
}

/** A session id from the fragment (`#qps_…`): where the page keeps the attempt across a reload. */
export function sessionIdFromHash(hash: string): string | undefined {
  const id = hash.replace(/^#/, '');
  return /^qps_[A-Za-z0-9]{1,100}$/.test(id) ? id : undefined;
}

/**
 * Whether `raw` is an amount with at most 6 fraction digits between min and max (decimal strings
 * compared as scaled integers, never as floats). The server decides; this only explains early.
 */
export function amountProblem(raw: string, min: string, max: string): string | undefined {
  const s = raw.trim();
  if (!/^\d+(\.\d{1,6})?$/.test(s)) return 'Enter an amount such as 12.50 (at most 6 decimals).';
  const scaled = (v: string) => {
    const [i, f = ''] = v.split('.');
    return BigInt(i!) * 1_000_000n + BigInt((f + '000000').slice(0, 6));
  };
  const v = scaled(s);
  if (v <= 0n) return 'Enter an amount above zero.';
  if (v < scaled(min) || v > scaled(max)) return `Enter an amount between ${min} and ${max}.`;
  return undefined;
}

/**
 * The idempotency key of a request: the same inputs on this page give the same key, so a double
 * click (or a retry after a lost answer) returns the first session instead of making a second one.
 */
export function idempotencyKey(pageNonce: string, body: Record<string, unknown>): string {
  let h = 0x811c9dc5;
  for (const ch of JSON.stringify(body)) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `${pageNonce}-${h.toString(16)}`;
}
