// Merchant request signing: docs/authentication.md, steps 1–6.
//
// One implementation shared by the server (verification) and the SDK (signing), so the two can only
// disagree if the wire does. The published vectors in `test-vectors/signing.json` pin the algorithm
// for implementers in other languages.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/** Header names of a signed merchant request (routes under `/api/v1`). */
export const HEADER_API_KEY = 'X-API-Key';
export const HEADER_TIMESTAMP = 'X-Timestamp';
export const HEADER_NONCE = 'X-Nonce';
export const HEADER_SIGN = 'X-Sign';

/** Allowed clock difference for `X-Timestamp`, either direction (docs/authentication.md). */
export const TIMESTAMP_WINDOW_SECONDS = 300;
/** `X-Nonce` length bounds in UTF-8 bytes, measured after trimming (docs/authentication.md). */
export const NONCE_MIN_BYTES = 8;
export const NONCE_MAX_BYTES = 128;

/** Everything that enters the merchant request signature. */
export type SignInput = {
  /** Decoded query parameters (form decoding: `%20` and `+` are both a space). */
  query?: Record<string, string>;
  /** Top-level fields of the JSON body (POST/PUT); for a server, the parsed request body. */
  body?: Record<string, unknown>;
  /** Exact `X-API-Key` header value. */
  apiKey: string;
  /** Exact `X-Timestamp` header value (decimal Unix seconds). */
  timestamp: string;
  /** Exact `X-Nonce` header value. */
  nonce: string;
};

/** The four authentication headers of one merchant request. */
export type SignedHeaders = {
  'X-API-Key': string;
  'X-Timestamp': string;
  'X-Nonce': string;
  'X-Sign': string;
};

const HEX_SIGN = /^[0-9a-f]{64}$/;

/**
 * Converts one body value to its signed string, or `undefined` when the field is omitted.
 *
 * The rule is "what the server sees after JSON.parse": a client signs the object it is about to
 * JSON.stringify, a server signs the object JSON.parse gave it, and both must reach the same string.
 * - `null`/`undefined` are dropped: the contract omits absent optional fields, never sends null.
 * - Finite numbers use `String(n)`, which is also what JSON.stringify writes, so a round trip is
 *   stable. Non-integer numbers are discouraged by the contract (use decimal strings); NaN and
 *   ±Infinity cannot be sent as JSON at all, so they are a caller bug and throw.
 * - A bigint cannot be JSON-serialized; the SDK writes it as a decimal string, so it signs as one.
 * - An object with `toJSON` (a Date) is signed as the value it serializes to, for the same reason.
 * - A nested object/array is forbidden by the wire contract (it belongs in a `*_json` string field)
 *   and servers reject it at validation; the signature is still defined, as its JSON.stringify, so
 *   that the rejection happens after authentication with a precise validation error. Nesting deeper
 *   than {@link MAX_SIGN_DEPTH} throws (JSON.stringify would overflow the stack on a hostile depth).
 */
function toSignValue(name: string, value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`sign: body field "${name}" is ${value}, which JSON cannot carry`);
      return String(value);
    case 'undefined':
      return undefined;
    case 'object': {
      if (value === null) return undefined;
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return toSignValue(name, toJSON.call(value));
      // JSON.stringify recurses: a body nested 10,000 deep would overflow the stack (a RangeError
      // before authentication). Measure the depth without recursion first.
      if (jsonDepthExceeds(value, MAX_SIGN_DEPTH)) throw new TypeError(`sign: body field "${name}" nests deeper than ${MAX_SIGN_DEPTH} levels`);
      return JSON.stringify(value);
    }
    default:
      throw new TypeError(`sign: body field "${name}" is a ${typeof value}, which JSON cannot carry`);
  }
}

/**
 * Deepest nesting of objects/arrays the signature accepts inside one body field. The wire contract
 * allows none (nested data travels in `*_json` strings); the bound only keeps signing total.
 */
export const MAX_SIGN_DEPTH = 64;

/**
 * Whether `value` nests objects/arrays more than `max` levels deep (a scalar is depth 0, `{}` is 1).
 * Iterative, so it is safe on any input JSON.parse can produce; stops as soon as the bound is passed.
 *
 * @example jsonDepthExceeds({ a: [1] }, 1) // => true
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d + 1 > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (typeof x === 'object' && x !== null) stack.push([x, d + 1]);
  }
  return false;
}

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Builds the parameter set that is signed (steps 1–4 of the algorithm).
 *
 * Order of precedence, lowest first: query, body, then `api_key`/`timestamp`/`nonce` from the
 * headers. Finally `sign` and every empty-string value are removed ("0" and "false" stay).
 *
 * @throws TypeError when a query value is not a string (a repeated query name: servers must reject
 *   it before signing), the body is not an object, or a body value cannot be JSON (NaN, function).
 * @example
 * buildSignParams({ query: { a: 'q' }, body: { a: 'b', n: 0, x: '' }, apiKey: 'k', timestamp: '1', nonce: 'n1' })
 * // => { a: 'b', n: '0', api_key: 'k', timestamp: '1', nonce: 'n1' }
 */
export function buildSignParams(input: SignInput): Record<string, string> {
  const params = signParams(input);
  for (const name of Object.keys(params)) if (params[name] === '') delete params[name];
  // A plain object again (spread defines own properties: "__proto__" stays data), for callers
  // that compare or print it.
  return { ...params };
}

/**
 * The parameter set as a null-prototype object: a body field literally named "__proto__" (JSON.parse
 * creates it as an own property) is signed as data, never reaching a prototype setter.
 */
function signParams(input: SignInput): Record<string, string> {
  const params: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(input.query ?? {})) {
    if (typeof value !== 'string') throw new TypeError(`sign: query parameter "${name}" must be a single string`);
    params[name] = value;
  }
  if (input.body !== undefined) {
    if (!isPlainRecord(input.body)) throw new TypeError('sign: body must be a JSON object');
    for (const name of Object.keys(input.body)) {
      const s = toSignValue(name, input.body[name]);
      // A dropped body field does not remove a same-named query field: nothing was sent to override it.
      if (s !== undefined) params[name] = s;
    }
  }
  params.api_key = input.apiKey;
  params.timestamp = input.timestamp;
  params.nonce = input.nonce;
  delete params.sign;
  return params;
}

/** Orders by UTF-16 code unit, which for ASCII names is ASCII order ("Z" < "_" < "a"). */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Joins parameters as `k=v&k=v` in ASCII order of the names (step 5). No escaping of any kind:
 * a value containing `&` or `=` is signed as is. Not `localeCompare`, which would put "B" after "a".
 *
 * @example
 * canonicalString({ b: '2', B: '1', a_b: '3' }) // => 'B=1&a_b=3&b=2'
 */
export function canonicalString(params: Record<string, string>): string {
  return joinSorted(params, false);
}

/**
 * `k=v&k=v` over the names in code-unit order, skipping empty values when `skipEmpty` (the signed
 * string of step 5, built straight from {@link signParams} without the intermediate plain object).
 */
function joinSorted(params: Record<string, string>, skipEmpty: boolean): string {
  let out = '';
  let first = true;
  for (const name of Object.keys(params).sort(compareCodeUnits)) {
    const value = params[name]!;
    if (skipEmpty && value === '') continue;
    out += first ? `${name}=${value}` : `&${name}=${value}`;
    first = false;
  }
  return out;
}

/** HMAC-SHA256 under the UTF-8 bytes of the secret (a string key is taken as UTF-8 by node:crypto). */
function hmac(apiSecret: string, canonical: string): Buffer {
  return createHmac('sha256', apiSecret).update(canonical, 'utf8').digest();
}

/**
 * Computes `X-Sign`: HMAC-SHA256 of the UTF-8 canonical string keyed with the merchant API secret,
 * lowercase hex, no `sha256=` prefix (step 6).
 *
 * @throws TypeError on an empty secret: an HMAC under an empty key is forgeable by anyone.
 * @example
 * // Vector order_create_plain of test-vectors/signing.json:
 * signRequest('sec_test_vectors_only_9XkPq2Lm', {
 *   body: { dapp_order_id: 'shop-1001', chain_id: 2345, token_symbol: 'USDC',
 *           from_address: '0x8ba1f109551bd432803012645ac136ddd64dba72', amount_wei: '1000000' },
 *   apiKey: 'key_4NbVzQ7hTd2sWx9KcRfYpM', timestamp: '1735689600', nonce: '0f8fad5b-d9cb-469f-a165-70867728950e' })
 * // => 'e8e53d6826727cc4489d784f49a0e1e8a820aa764e10b3bd06fc28a16bb5b355'
 */
export function signRequest(apiSecret: string, input: SignInput): string {
  if (typeof apiSecret !== 'string' || apiSecret.length === 0) throw new TypeError('sign: apiSecret must be a non-empty string');
  return hmac(apiSecret, joinSorted(signParams(input), true)).toString('hex');
}

/**
 * Checks an `X-Sign` value in constant time. Only exactly 64 lowercase hex characters are accepted,
 * so an uppercase digest or a `sha256=`-prefixed value fails. An empty secret never verifies.
 * Freshness of the timestamp and uniqueness of the nonce are separate checks
 * ({@link isTimestampFresh}, {@link isNonceWellFormed}, and the server's nonce store).
 *
 * @throws TypeError like {@link buildSignParams} (repeated query name, non-object body): a server
 *   rejects those as `invalid_request` before verifying.
 *
 * @example
 * verifyRequestSignature(secret, input, req.headers['x-sign']) // => true | false
 */
export function verifyRequestSignature(apiSecret: string, input: SignInput, sign: string): boolean {
  if (typeof apiSecret !== 'string' || apiSecret.length === 0) return false;
  if (typeof sign !== 'string' || !HEX_SIGN.test(sign)) return false;
  const expected = hmac(apiSecret, joinSorted(signParams(input), true));
  const given = Buffer.from(sign, 'hex');
  // Both are 32 bytes here (the regex fixed the length), as timingSafeEqual requires.
  return timingSafeEqual(expected, given);
}

/**
 * Produces fresh authentication headers for one request attempt: timestamp in seconds, a random
 * UUID nonce, and the signature over `query` and `body`. Call it again for every retry: the server
 * may have consumed the nonce even when it answered with an error (docs/authentication.md, "Rules worth knowing").
 *
 * `now` returns milliseconds (like `Date.now`); `nonce` defaults to `crypto.randomUUID`.
 * The body signed must be the object that is then sent with JSON.stringify.
 *
 * @example
 * const body = { dapp_order_id: 'A-1', chain_id: 2345, token_symbol: 'USDC', from_address, amount_wei: '1000000' };
 * await fetch(`${base}/api/v1/orders`, { method: 'POST', body: JSON.stringify(body),
 *   headers: { 'Content-Type': 'application/json', ...signedHeaders({ apiKey, apiSecret, body }) } });
 */
export function signedHeaders(opts: { apiKey: string; apiSecret: string; query?: Record<string, string>; body?: Record<string, unknown>; now?: () => number; nonce?: () => string }): SignedHeaders {
  const timestamp = String(Math.floor((opts.now ?? Date.now)() / 1000));
  const nonce = (opts.nonce ?? randomUUID)();
  const input: SignInput = { apiKey: opts.apiKey, timestamp, nonce };
  if (opts.query !== undefined) input.query = opts.query;
  if (opts.body !== undefined) input.body = opts.body;
  return {
    [HEADER_API_KEY]: opts.apiKey,
    [HEADER_TIMESTAMP]: timestamp,
    [HEADER_NONCE]: nonce,
    [HEADER_SIGN]: signRequest(opts.apiSecret, input),
  };
}

/**
 * Whether `X-Timestamp` is decimal Unix seconds within ±`windowSeconds` of `nowSeconds`.
 * A millisecond value (13 digits) lands ~50 000 years away and fails the window.
 *
 * @example
 * isTimestampFresh('1700000000', 1700000299) // => true
 * isTimestampFresh('1700000000', 1700000301) // => false
 */
export function isTimestampFresh(timestamp: string, nowSeconds: number, windowSeconds = TIMESTAMP_WINDOW_SECONDS): boolean {
  // 15 digits keeps Number() exact (< 2^53) while being far beyond any real clock.
  if (typeof timestamp !== 'string' || !/^[0-9]{1,15}$/.test(timestamp)) return false;
  return Math.abs(Number(timestamp) - nowSeconds) <= windowSeconds;
}

/**
 * Whether an `X-Nonce` value has 8 to 128 UTF-8 bytes after trimming. Whether it was already used
 * is the server's nonce store's question (a reuse gives 401 `Replay request detected`).
 *
 * @example
 * isNonceWellFormed(crypto.randomUUID()) // => true
 * isNonceWellFormed('  short ') // => false
 */
export function isNonceWellFormed(nonce: string | undefined): boolean {
  if (typeof nonce !== 'string') return false;
  const n = Buffer.byteLength(nonce.trim(), 'utf8');
  return n >= NONCE_MIN_BYTES && n <= NONCE_MAX_BYTES;
}
