// camelCase parameters → flattened wire bodies, and wire responses → checked SDK shapes.
//
// Every wire body is built here with only strings and safe integers in it, in the field order of
// the documented requests (docs/orders.md), absent optionals omitted (never null). The transport serializes it once and signs
// that same object, so the signed string of every field is exactly what the server reads back
// after JSON.parse: a string is itself, an integer is its decimal digits (chain_id 31337 travels
// as `31337`, which the server's integer schema accepts and signs as "31337"). Nested values are
// JSON-serialized exactly once into their `*_json` string field. A wrong parameter type is a bug in
// the caller and throws TypeError before anything is sent.
import { TollgateResponseError } from './errors.ts';
import type { CalldataSignRequest, CreateCheckoutSessionParams, CreatedOrder, CreateOrderParams, Eip3009Authorization, PaymentRequiredBody } from './types.ts';

export function fail(param: string, expected: string, value: unknown): never {
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'string' ? JSON.stringify(value) : typeof value;
  throw new TypeError(`Tollgate: ${param} must be ${expected}; got ${got}`);
}

export const absent = (v: unknown): v is undefined | null => v === undefined || v === null;

export function str(param: string, v: unknown): string {
  if (typeof v !== 'string' || v.length === 0) fail(param, 'a non-empty string', v);
  return v;
}

function int(param: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) fail(param, 'a positive integer number', v);
  return v;
}

function intString(param: string, v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  // Numbers are refused: 1e21 serializes as "1e+21" and 0.1 + 0.2 is not money (STYLE money rule).
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v)) fail(param, 'an integer string or a bigint (smallest unit)', v);
  return v;
}

export function decimalString(param: string, v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9]+(\.[0-9]+)?$/.test(v)) fail(param, 'a decimal string such as "9.99" (never a number)', v);
  return v;
}

function jsonOnce(param: string, v: unknown, kind: 'array' | 'object'): string {
  const ok = kind === 'array' ? Array.isArray(v) : typeof v === 'object' && v !== null && !Array.isArray(v);
  // A string here would be serialized a second time ("\"[...]\""): pass the value, not its JSON.
  if (!ok) fail(param, kind === 'array' ? 'an array (the SDK serializes it once)' : 'a plain object (the SDK serializes it once)', v);
  return JSON.stringify(v);
}

/**
 * The wire body of `POST /api/v1/orders`.
 *
 * @example
 * orderCreateBody({ dappOrderId: 'A-1', chainId: 2345, tokenSymbol: 'USDC', fromAddress: '0xabc…', amountWei: 1000000n })
 * // => { dapp_order_id: 'A-1', chain_id: 2345, token_symbol: 'USDC', from_address: '0xabc…', amount_wei: '1000000' }
 */
export function orderCreateBody(p: CreateOrderParams): Record<string, string | number> {
  if (typeof p !== 'object' || p === null) fail('createOrder params', 'an object', p);
  const b: Record<string, string | number> = {
    dapp_order_id: str('dappOrderId', p.dappOrderId),
    chain_id: int('chainId', p.chainId),
    token_symbol: str('tokenSymbol', p.tokenSymbol),
  };
  if (!absent(p.tokenContract)) b.token_contract = str('tokenContract', p.tokenContract);
  b.from_address = str('fromAddress', p.fromAddress);
  b.amount_wei = intString('amountWei', p.amountWei);
  if (!absent(p.callbackCalldata)) b.callback_calldata = str('callbackCalldata', p.callbackCalldata);
  if (!absent(p.merchantId)) b.merchant_id = str('merchantId', p.merchantId);
  return b;
}

/**
 * The wire body of `POST /api/v1/checkout/sessions` (docs/migrating.md, fields in its order).
 *
 * @example
 * checkoutSessionBody({ paymentRails: ['crypto', 'fiat'], price: '9.99', lineItems: [{ name: 'Tee', quantity: 1, amount: '9.99' }] })
 * // => { checkout_type: 'DIRECT', payment_rails: 'crypto,fiat', price: '9.99',
 * //      line_items_json: '[{"name":"Tee","quantity":1,"amount":"9.99"}]' }
 */
export function checkoutSessionBody(p: CreateCheckoutSessionParams): Record<string, string | number> {
  if (typeof p !== 'object' || p === null) fail('createCheckoutSession params', 'an object', p);
  const b: Record<string, string | number> = { checkout_type: absent(p.checkoutType) ? 'DIRECT' : str('checkoutType', p.checkoutType) };
  if (!absent(p.paymentRails)) {
    const rails: unknown = p.paymentRails;
    if (!Array.isArray(rails) || rails.length === 0 || !rails.every((r) => typeof r === 'string' && /^[a-z_]+$/.test(r))) {
      fail('paymentRails', "a non-empty array such as ['crypto', 'fiat']", rails);
    }
    b.payment_rails = rails.join(',');
  }
  if (!absent(p.price)) b.price = decimalString('price', p.price);
  if (!absent(p.fiatCurrency)) b.fiat_currency = str('fiatCurrency', p.fiatCurrency);
  if (!absent(p.fiatAmount)) b.fiat_amount = decimalString('fiatAmount', p.fiatAmount);
  if (!absent(p.clientReferenceId)) b.client_reference_id = str('clientReferenceId', p.clientReferenceId);
  if (!absent(p.expiresIn)) b.expires_in = int('expiresIn', p.expiresIn);
  if (!absent(p.lineItems)) b.line_items_json = jsonOnce('lineItems', p.lineItems, 'array');
  if (!absent(p.publicMetadata)) b.public_metadata_json = jsonOnce('publicMetadata', p.publicMetadata, 'object');
  if (!absent(p.privateMetadata)) b.private_metadata_json = jsonOnce('privateMetadata', p.privateMetadata, 'object');
  if (!absent(p.successUrl)) b.success_url = str('successUrl', p.successUrl);
  if (!absent(p.cancelUrl)) b.cancel_url = str('cancelUrl', p.cancelUrl);
  return b;
}

/**
 * The wire body of `POST /api/v1/orders/{id}/calldata-signature`: a 65-byte 0x-hex signature.
 *
 * @example calldataSignatureBody('0x' + 'ab'.repeat(65)) // => { signature: '0xabab…' }
 */
export function calldataSignatureBody(signature: string): Record<string, string> {
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature)) fail('signature', 'a 65-byte 0x-prefixed hex string', signature);
  return { signature };
}

/**
 * Body of POST /api/v1/orders/{id}/authorization: the EIP-3009 fields, checked for shape only
 * (the gateway checks them against the order and the chain).
 *
 * @example authorizationBody({ from: '0x…', to: '0x…', value: '1000000', validAfter: '0', validBefore: '1900000000', nonce: '0x…', signature: '0x…' })
 */
export function authorizationBody(a: Eip3009Authorization): Record<string, string> {
  if (typeof a !== 'object' || a === null) fail('authorization', 'an object', a);
  const hex = (param: keyof Eip3009Authorization, bytes: number) => {
    const v = a[param];
    if (typeof v !== 'string' || !new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(v)) fail(param, `a ${bytes}-byte 0x-prefixed hex string`, v);
    return v;
  };
  const uint = (param: keyof Eip3009Authorization) => {
    const v = a[param];
    if (typeof v !== 'string' || !/^[0-9]{1,78}$/.test(v)) fail(param, 'a decimal integer string', v);
    return v;
  };
  return {
    from: hex('from', 20),
    to: hex('to', 20),
    value: uint('value'),
    validAfter: uint('validAfter'),
    validBefore: uint('validBefore'),
    nonce: hex('nonce', 32),
    signature: hex('signature', 65),
  };
}

/** A path segment: ids are opaque strings and must not change the path. */
export function pathSegment(param: string, v: unknown): string {
  return encodeURIComponent(str(param, v));
}

// ---------------------------------------------------------------------------------------------
// Response checks. They verify only what the SDK relies on (so that a newer server may add fields)
// and throw TollgateResponseError naming the first missing piece.

export type Checker<T> = (body: unknown) => T;

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function need(ok: boolean, what: string, body: unknown): asserts ok {
  if (!ok) throw new TollgateResponseError(`unexpected response body: ${what}`, { body });
}

/**
 * The chain id of a CAIP-2 network. `eip155:2345` → 2345. Other namespaces (`solana:<genesis
 * hash prefix>`, docs/solana.md) do not carry Tollgate's integer chain id: the order is on the chain
 * the request named, so that id is the answer. Refusing them used to throw after the gateway had
 * created the order, and a retry with the same dappOrderId was then a 409.
 *
 * @example chainIdOf('eip155:137', 137) // => 137
 * @example chainIdOf('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', 101) // => 101
 */
function chainIdOf(network: unknown, requested: number | undefined): number | undefined {
  if (typeof network !== 'string') return undefined;
  const evm = /^eip155:([0-9]{1,15})$/.exec(network);
  if (evm) return Number(evm[1]);
  // CAIP-2: a namespace of 3–8 [-a-z0-9] and a reference of 1–32 [-_a-zA-Z0-9].
  return /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(network) ? requested : undefined;
}

/**
 * Normalizes the 402 body of order creation into the SDK's one normalized shape. `requestedChainId`
 * is the `chainId` the order was created with: the chain id of a non-EVM network (see chainIdOf).
 *
 * @example
 * const order = normalizeCreatedOrder(await res.json(), 2345);
 * order.payToAddress; order.amountWei; order.x402.accepts[0].payTo === order.payToAddress // => true
 */
export function normalizeCreatedOrder(body: unknown, requestedChainId?: number): CreatedOrder {
  need(isObj(body), 'not a JSON object', body);
  const a = Array.isArray(body.accepts) ? body.accepts[0] : undefined;
  const t = isObj(body.extensions) ? body.extensions.paymentTerms : undefined;
  need(typeof body.order_id === 'string' && body.order_id.length > 0, 'order_id missing', body);
  need(isObj(a), 'accepts[0] missing', body);
  need(isObj(t), 'extensions.paymentTerms missing', body);
  const fromChainId = chainIdOf(a.network, requestedChainId);
  const payToChainId = chainIdOf(t.destinationChain, requestedChainId);
  need(fromChainId !== undefined, 'accepts[0].network is not a CAIP-2 network of the requested chain', body);
  need(payToChainId !== undefined, 'extensions.paymentTerms.destinationChain is not a CAIP-2 network of the requested chain', body);
  need(typeof a.payTo === 'string' && typeof a.asset === 'string', 'accepts[0].payTo or asset missing', body);
  need(typeof a.amount === 'string' && /^[0-9]+$/.test(a.amount), 'accepts[0].amount is not an integer string', body);
  need(Number.isSafeInteger(t.expiresAt), 'extensions.paymentTerms.expiresAt missing', body);
  const extra = isObj(a.extra) ? a.extra : {};
  const flow = typeof body.flow === 'string' ? body.flow : extra.flow;
  const tokenSymbol = typeof body.token_symbol === 'string' ? body.token_symbol : extra.tokenSymbol;
  need(typeof flow === 'string' && typeof tokenSymbol === 'string', 'flow or token_symbol missing', body);
  need(Number.isSafeInteger(extra.decimals), 'accepts[0].extra.decimals missing', body);
  const order: CreatedOrder = {
    orderId: body.order_id,
    flow,
    tokenSymbol,
    tokenContract: a.asset,
    payToAddress: a.payTo,
    network: a.network,
    fromChainId,
    payToChainId,
    amountWei: a.amount,
    decimals: extra.decimals,
    expiresAt: t.expiresAt,
    x402: body as unknown as PaymentRequiredBody,
  };
  if (typeof t.paymentUrl === 'string') order.paymentUrl = t.paymentUrl;
  if (isObj(t.approve)) order.approve = t.approve;
  if (body.calldata_sign_request !== undefined) {
    need(isObj(body.calldata_sign_request), 'calldata_sign_request is not an object', body);
    order.calldataSignRequest = body.calldata_sign_request as unknown as CalldataSignRequest;
  }
  return order;
}

/** A checker requiring an object whose named fields have the given `typeof`. */
export function objectWith<T>(fields: Record<string, 'string' | 'number' | 'object'>): Checker<T> {
  return (body) => {
    need(isObj(body), 'not a JSON object', body);
    for (const [k, type] of Object.entries(fields)) need(typeof body[k] === type && body[k] !== null, `${k} missing`, body);
    return body as T;
  };
}
