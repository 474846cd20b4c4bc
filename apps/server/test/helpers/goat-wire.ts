// GOAT Network's merchant-server wire as its SDKs speak it (GOATNetwork/x402:
// goatx402-sdk-server-ts 0.1.0–0.4.0, goatx402-sdk-server-go), re-implemented here from the
// documented and observed facts (docs/migrating.md) so the conformance tests do not lean on
// Tollgate's own signing or client. Nothing here is the SDKs' code.
import { createHmac, randomUUID } from 'node:crypto';

export interface GoatCreds {
  apiKey: string;
  apiSecret: string;
}

/**
 * GOAT's signing rule: every body field as a string (`String(v)` in TypeScript, `fmt %v` in Go:
 * the same text for strings, integers and booleans), plus `api_key`, `timestamp` (Unix seconds) and
 * `nonce`; `sign` and empty values dropped; names sorted by code unit; `k=v` joined with `&`;
 * HMAC-SHA256 with the secret, lower-case hex.
 */
function goatSign(params: Record<string, string>, secret: string): string {
  const names = Object.keys(params)
    .filter((k) => k !== 'sign' && params[k] !== '')
    .sort();
  return createHmac('sha256', secret)
    .update(names.map((k) => `${k}=${params[k]}`).join('&'))
    .digest('hex');
}

/** The four headers GOAT's SDK sends, for a body (GETs sign `{}`) at `nowSeconds`. */
function goatHeaders(creds: GoatCreds, body: Record<string, unknown> | undefined, nowSeconds: number, nonce: string = randomUUID()) {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(body ?? {})) if (v !== undefined && v !== null) params[k] = String(v);
  const timestamp = String(nowSeconds);
  params.api_key = creds.apiKey;
  params.timestamp = timestamp;
  params.nonce = nonce;
  return { 'X-API-Key': creds.apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Sign': goatSign(params, creds.apiSecret) };
}

export interface GoatAnswer {
  status: number;
  body: any;
  headers: Headers;
  /** What GOAT's SDK would throw: message from `error` (else `message`), `code` as sent; undefined on success. */
  error?: { message: string; code: string | undefined; status: number };
}

/**
 * One request as GOAT's SDK sends it: `Content-Type: application/json` on every request (GETs
 * too, without a body), the body as JSON. Success is 2xx, and 402 only for order creation
 * (`expect402`); the Go SDK is stricter (exactly 200, or 402), which `goStatusOk` checks.
 */
export async function goatRequest(baseUrl: string, creds: GoatCreds | undefined, method: 'GET' | 'POST', path: string, opts: { body?: Record<string, unknown>; nowSeconds: number; nonce?: string; expect402?: boolean }): Promise<GoatAnswer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (creds) Object.assign(headers, goatHeaders(creds, opts.body, opts.nowSeconds, opts.nonce));
  const res = await fetch(baseUrl + path, { method, headers, ...(opts.body ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  let body: any = {};
  try {
    body = JSON.parse(text);
  } catch {
    /* GOAT's SDK keeps a non-JSON answer as text */
  }
  const ok = res.ok || (res.status === 402 && opts.expect402 === true);
  if (ok) return { status: res.status, body, headers: res.headers };
  return { status: res.status, body, headers: res.headers, error: { message: body.error || body.message || text || `HTTP ${res.status}`, code: body.code, status: res.status } };
}

/** `parseX402Header` of both SDKs: the `PAYMENT-REQUIRED` header, standard base64 of the 402 JSON. */
export function parseX402Header(value: string | null): unknown {
  return value === null ? null : JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
}

/** The Go SDK's `request`: anything but 200 (or 402) is an APIError. */
export const goStatusOk = (status: number) => status === 200 || status === 402;

/** `fromCAIP2` of both SDKs: `eip155:<n>` → n, anything else → 0. */
function fromCaip2(network: unknown): number {
  const m = typeof network === 'string' ? /^eip155:(\d+)$/.exec(network) : null;
  return m ? Number.parseInt(m[1]!, 10) : 0;
}

/**
 * What `createOrder` makes of the 402 body (both SDKs' `parseX402ToOrder`): the first accepted
 * option, `flow`/`token_symbol` with `extra` as fallback, and the chain and expiry from
 * `extensions.goatx402` — 0 when that object is missing.
 */
export function goatOrderOf(x402: any, params: { chainId: number; tokenSymbol: string; amountWei: string }) {
  const opt = x402.accepts?.[0];
  const ext = x402.extensions?.goatx402;
  return {
    orderId: x402.order_id as string,
    flow: (x402.flow || opt?.extra?.flow || 'ERC20_DIRECT') as string,
    tokenSymbol: (x402.token_symbol || opt?.extra?.tokenSymbol || params.tokenSymbol) as string,
    tokenContract: (opt?.asset || '') as string,
    payToAddress: (opt?.payTo || '') as string,
    fromChainId: (opt ? fromCaip2(opt.network) : 0) || params.chainId,
    payToChainId: ext?.destinationChain ? fromCaip2(ext.destinationChain) : 0,
    amountWei: (opt?.amount || params.amountWei) as string,
    expiresAt: (ext?.expiresAt || 0) as number,
    calldataSignRequest: x402.calldata_sign_request,
  };
}

/**
 * Go's encoding/json, as far as the Go SDK's structs reach: a field it declares must hold the JSON
 * type its Go type takes (a string for `string`, an integer for `int`/`int64`, an object for a
 * struct or map, an array for a slice) or be null/absent; anything else fails the whole decode.
 * Undeclared fields are ignored, as Go ignores them.
 */
export type GoShape = 'string' | 'int' | 'bool' | 'any' | { [field: string]: GoShape } | [GoShape] | { '*map': GoShape };

export function goDecodeProblems(value: unknown, shape: GoShape, path = '$'): string[] {
  if (value === null || value === undefined || shape === 'any') return [];
  if (shape === 'string') return typeof value === 'string' ? [] : [`${path}: ${JSON.stringify(value)} is not a string`];
  if (shape === 'bool') return typeof value === 'boolean' ? [] : [`${path}: ${JSON.stringify(value)} is not a bool`];
  if (shape === 'int') return typeof value === 'number' && Number.isSafeInteger(value) ? [] : [`${path}: ${JSON.stringify(value)} is not an integer`];
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: not an array`];
    return value.flatMap((v, i) => goDecodeProblems(v, shape[0], `${path}[${i}]`));
  }
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`];
  const rec = value as Record<string, unknown>;
  if ('*map' in shape) return Object.entries(rec).flatMap(([k, v]) => goDecodeProblems(v, (shape as { '*map': GoShape })['*map'], `${path}.${k}`));
  return Object.entries(shape).flatMap(([k, s]) => goDecodeProblems(rec[k], s, `${path}.${k}`));
}

const EIP712Type: GoShape = { name: 'string', type: 'string' };

/** The Go SDK's response structs (types.go), field names as their json tags spell them. */
export const GO = {
  X402PaymentRequired: {
    x402Version: 'int',
    error: 'string',
    resource: { url: 'string', description: 'string', mimeType: 'string' },
    accepts: [{ scheme: 'string', network: 'string', amount: 'string', asset: 'string', payTo: 'string', maxTimeoutSeconds: 'int', extra: { '*map': 'any' } }],
    extensions: { goatx402: { destinationChain: 'string', expiresAt: 'int', signatureEndpoint: 'string', paymentMethod: 'string', receiveType: 'string' } },
    order_id: 'string',
    flow: 'string',
    token_symbol: 'string',
    calldata_sign_request: {
      domain: { name: 'string', version: 'string', chainId: 'int', verifyingContract: 'string' },
      types: { '*map': [EIP712Type] },
      primaryType: 'string',
      message: 'any',
    },
  },
  OrderStatus: {
    order_id: 'string',
    merchant_id: 'string',
    dapp_order_id: 'string',
    chain_id: 'int',
    token_contract: 'string',
    token_symbol: 'string',
    from_address: 'string',
    amount_wei: 'string',
    status: 'string',
    tx_hash: 'string',
    confirmed_at: 'string',
  },
  // chain_id/flow in the earlier payload, from_chain_id/status in the later one: both are read
  OrderProofResponse: {
    payload: {
      order_id: 'string',
      tx_hash: 'string',
      log_index: 'int',
      from_addr: 'string',
      to_addr: 'string',
      amount_wei: 'string',
      chain_id: 'int',
      flow: 'string',
      from_chain_id: 'int',
      status: 'string',
    },
    signature: 'string',
  },
  MerchantInfo: {
    merchant_id: 'string',
    name: 'string',
    logo: 'string',
    receive_type: 'string',
    supported_tokens: [{ chain_id: 'int', symbol: 'string', token_contract: 'string', decimals: 'int' }],
  },
  CheckoutSession: { checkout_id: 'string', checkout_type: 'string', url: 'string', expires_at: 'int' },
  APIError: { error: 'string', message: 'string', code: 'string' },
} satisfies Record<string, GoShape>;
