// The public checkout calls. URLs are relative to the page (`/checkout/pay`), so a deployment
// behind a path prefix works unchanged and the page never talks to another origin.
import { clockOffsetMs } from './countdown.ts';
import type { BindTerms, CardStart, PublicSession, StatusProjection, TestCard, TestCardResult } from './types.ts';

/** A non-2xx answer in the error envelope `{ error, code, param?, request_id }`, or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfter?: number;
  readonly param?: string;
  constructor(
    status: number,
    code: string,
    message: string,
    /** seconds, from `Retry-After` on a 429/503 */
    retryAfter?: number,
    /** the offending field of a 400 */
    param?: string,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.param = param;
    this.name = 'ApiError';
  }
}

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

export interface CheckoutApi {
  session(): Promise<PublicSession>;
  status(): Promise<StatusProjection>;
  bind(body: { chain_id: number; token_symbol: string; from_address: string }): Promise<BindTerms>;
  /** Solana Pay transaction request: the bound order's unsigned transfer (base64) for `account` to sign and send. */
  solanaTransaction(account: string): Promise<{ transaction: string; message: string }>;
  /** Starts (or resumes) the card payment of the session. */
  card(): Promise<CardStart>;
  /** TEST processor: pays the card order with a test card (the number goes only to this origin). */
  testCard(card: TestCard): Promise<TestCardResult>;
  /** ms to add to Date.now() for server time, updated from every response's Date header */
  readonly clockOffset: number;
}

/**
 * A client for one checkout id. `base` is the page URL (the id travels in its fragment, which
 * URL resolution drops: it reaches the server only in these API paths).
 *
 * @example const api = checkoutApi(location.href, 'cs_…'); const s = await api.session();
 */
export function checkoutApi(base: string, checkoutId: string, fetchFn: Fetch = (u, i) => fetch(u, i)): CheckoutApi {
  const root = new URL(`v1/sessions/${encodeURIComponent(checkoutId)}`, base).toString();
  let offset = 0;
  async function call<T>(method: 'GET' | 'POST', suffix: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetchFn(root + suffix, {
        method,
        credentials: 'omit',
        cache: 'no-store',
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'network_error', 'The checkout service could not be reached.');
    }
    offset = clockOffsetMs(res.headers.get('date'), Date.now()) || offset;
    let data: unknown;
    try {
      data = await res.json();
    } catch {
      data = undefined;
    }
    if (!res.ok) {
      const env = (data ?? {}) as { error?: unknown; code?: unknown; param?: unknown };
      const ra = Number(res.headers.get('retry-after'));
      throw new ApiError(
        res.status,
        typeof env.code === 'string' ? env.code : `http_${res.status}`,
        typeof env.error === 'string' ? env.error : `HTTP ${res.status}`,
        Number.isFinite(ra) && ra > 0 ? ra : undefined,
        typeof env.param === 'string' ? env.param : undefined,
      );
    }
    if (data === undefined) throw new ApiError(res.status, 'invalid_response', 'The checkout service sent an unreadable answer.');
    return data as T;
  }
  return {
    session: () => call<PublicSession>('GET', ''),
    status: () => call<StatusProjection>('GET', '/status'),
    bind: (b) => call<BindTerms>('POST', '/bind', b),
    solanaTransaction: (account) => call<{ transaction: string; message: string }>('POST', '/solana-pay', { account }),
    card: () => call<CardStart>('POST', '/card', {}),
    testCard: (c) => call<TestCardResult>('POST', '/card/test-payment', c),
    get clockOffset() {
      return offset;
    },
  };
}

/**
 * Where the browser goes after completion: `success_url` with `checkout_id` added as a query
 * parameter. Only http(s) URLs are followed (the server allowlists them; this is a second guard).
 *
 * @example successRedirect('https://shop.example/thanks?x=1', 'cs_1') // => 'https://shop.example/thanks?x=1&checkout_id=cs_1'
 */
export function successRedirect(successUrl: string | undefined, checkoutId: string): string | undefined {
  const u = safeHttpUrl(successUrl);
  if (!u) return undefined;
  u.searchParams.set('checkout_id', checkoutId);
  return u.toString();
}

/** A parsed http(s) URL, or undefined (javascript:, data:, garbage). */
export function safeHttpUrl(raw: string | undefined): URL | undefined {
  if (!raw) return undefined;
  try {
    const u = new URL(raw);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The merchant logo is shown only from an https URL or the page's own origin: CSP (img-src 'self'
 * https: data:) would block anything else, and a plain-http image is a mixed-content and tracking
 * risk. Returns the URL to use or undefined.
 *
 * @example logoSrc('https://cdn.shop.example/logo.png', 'https://pay.example') // => 'https://cdn.shop.example/logo.png'
 * @example logoSrc('http://shop.example/logo.png', 'https://pay.example') // => undefined
 */
export function logoSrc(raw: string | undefined, pageOrigin: string): string | undefined {
  if (!raw) return undefined;
  try {
    const u = new URL(raw, pageOrigin);
    if (u.protocol === 'https:' || u.origin === pageOrigin) return u.toString();
  } catch {
    /* not a URL */
  }
  return undefined;
}

/**
 * The checkout id from the page's fragment (`/checkout/pay#cs_…`): the fragment never reaches a
 * server log. Undefined when absent or not id-shaped.
 *
 * @example checkoutIdFromHash('#cs_AbC123') // => 'cs_AbC123'
 */
export function checkoutIdFromHash(hash: string): string | undefined {
  const id = hash.replace(/^#/, '').split(/[?&]/)[0] ?? '';
  return /^[A-Za-z0-9_-]{1,200}$/.test(id) ? id : undefined;
}
