// TollgateClient: the merchant API, one method per route (docs/migrating.md lists them).
import { QuickPayClient } from './quickpay.ts';
import { Transport } from './transport.ts';
import { pollOrderUntilTerminal, type WaitForOrderOptions } from './wait.ts';
import { authorizationBody, calldataSignatureBody, checkoutSessionBody, normalizeCreatedOrder, objectWith, orderCreateBody, pathSegment } from './wire.ts';
import type {
  AuthorizationResult,
  CalldataSignatureResult,
  Eip3009Authorization,
  CallOptions,
  CheckoutSession,
  CreateCheckoutSessionParams,
  CreatedOrder,
  CreateOrderParams,
  MerchantConfig,
  MerchantSelf,
  OrderStatusRecord,
  AcceptPaymentParams,
  PaymentProof,
  Refund,
  RefundParams,
} from './types.ts';

export interface TollgateClientOptions {
  /** Base address of the environment, e.g. `https://pay.example.com` (a path prefix is allowed). */
  baseUrl: string;
  apiKey: string;
  /** The API secret: keep it on your server. The client holds it in a private field. */
  apiSecret: string;
  /** Per-attempt timeout in ms (connect, send, and read the whole response). Default 30 000. */
  timeoutMs?: number | undefined;
  /** Attempts of a read (getOrderStatus, getOrderProof, getMerchant), first included. Default 3. Writes always get 1. */
  maxAttempts?: number | undefined;
  /** First backoff delay of a read retry, in ms. Default 500. */
  retryBaseDelayMs?: number | undefined;
  /** Backoff cap, in ms. Default 8000. `Retry-After` from the server takes precedence (up to 60 s). */
  retryMaxDelayMs?: number | undefined;
  /** A fetch implementation; default: the global `fetch` of Node 20+. */
  fetch?: typeof fetch | undefined;
}

const ORDER_RECORD = objectWith<OrderStatusRecord>({ order_id: 'string', status: 'string' });
const REFUND = objectWith<Refund>({ refund_id: 'string', rail: 'string', status: 'string' });
const REFUNDS = objectWith<{ refunds: Refund[] }>({ refunds: 'object' });
const PROOF = objectWith<PaymentProof>({ payload: 'object', signature: 'string' });
const MERCHANT = objectWith<MerchantConfig>({ merchant_id: 'string', wallets: 'object' });
const MERCHANT_SELF = objectWith<MerchantSelf>({ merchant_id: 'string', wallets: 'object', fee_balance: 'object' });
const CHECKOUT = objectWith<CheckoutSession>({ checkout_id: 'string', url: 'string', expires_at: 'number' });
const CALLDATA_OK = objectWith<CalldataSignatureResult>({ status: 'string' });
const AUTHORIZATION_OK = objectWith<AuthorizationResult>({ status: 'string', tx_hash: 'string' });

function positive(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new TypeError(`Tollgate: ${name} must be a positive number`);
  return v;
}

/**
 * Client of the Tollgate merchant API. Every `/api/v1` request is HMAC-signed with fresh
 * headers per attempt; reads are retried, writes never are (see README "Retries").
 *
 * @example
 * import { TollgateClient } from '@tollgate/sdk';
 * const tollgate = new TollgateClient({
 *   baseUrl: 'https://pay.example.com',
 *   apiKey: process.env.TOLLGATE_API_KEY!,
 *   apiSecret: process.env.TOLLGATE_API_SECRET!,
 * });
 * const order = await tollgate.createOrder({ dappOrderId: 'A-1001', chainId: 2345, tokenSymbol: 'USDC',
 *   fromAddress: payer, amountWei: 1_000_000n });
 * // show order.payToAddress, order.amountWei, order.expiresAt to the payer
 */
export class TollgateClient {
  readonly baseUrl: string;
  /** Hosted quick-pay: products, payment links and their sessions (see quickpay.ts). */
  readonly quickpay: QuickPayClient;
  readonly #transport: Transport;

  constructor(options: TollgateClientOptions) {
    if (typeof options !== 'object' || options === null) throw new TypeError('Tollgate: options are required');
    const { baseUrl, apiKey, apiSecret } = options;
    if (typeof baseUrl !== 'string' || !/^https?:\/\/[^/]/.test(baseUrl)) throw new TypeError('Tollgate: baseUrl must be an http(s) URL');
    if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('Tollgate: apiKey is required');
    if (typeof apiSecret !== 'string' || apiSecret === '') throw new TypeError('Tollgate: apiSecret is required');
    const maxAttempts = positive('maxAttempts', options.maxAttempts, 3);
    if (!Number.isInteger(maxAttempts)) throw new TypeError('Tollgate: maxAttempts must be an integer');
    if (typeof (options.fetch ?? globalThis.fetch) !== 'function') throw new TypeError('Tollgate: no fetch available; pass options.fetch');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey,
      apiSecret,
      timeoutMs: positive('timeoutMs', options.timeoutMs, 30_000),
      maxAttempts,
      retryBaseDelayMs: positive('retryBaseDelayMs', options.retryBaseDelayMs, 500),
      retryMaxDelayMs: positive('retryMaxDelayMs', options.retryMaxDelayMs, 8_000),
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    });
    this.quickpay = new QuickPayClient(this.#transport);
  }

  /**
   * Creates a payment order (`POST /api/v1/orders`; success is HTTP 402) and returns its
   * normalized payment terms. Never retried: on an unknown outcome it throws
   * {@link TollgateUnknownOutcomeError} carrying `dappOrderId`; a duplicate `dappOrderId` is a
   * {@link TollgateApiError} with code `order_already_exists` (409) and does not return the original.
   *
   * @example
   * const order = await tollgate.createOrder({ dappOrderId: purchase.id, chainId: 2345, tokenSymbol: 'USDC',
   *   fromAddress: purchase.payer, amountWei: '1000000' });
   * await db.saveOrder(purchase.id, order.orderId, order.x402); // save before showing terms
   */
  async createOrder(params: CreateOrderParams, opts: CallOptions = {}): Promise<CreatedOrder> {
    const body = orderCreateBody(params);
    return this.#transport.call({
      method: 'POST',
      path: '/api/v1/orders',
      body,
      auth: 'merchant',
      safe: false,
      expect: 402,
      check: (b) => normalizeCreatedOrder(b, params.chainId),
      reference: { dappOrderId: body.dapp_order_id as string },
      ...opts,
    });
  }

  /**
   * Reads the order status record (`GET /api/v1/orders/{id}`). Retried on network errors, 429 and 5xx.
   *
   * @example
   * const o = await tollgate.getOrderStatus('ord_3vQB7…');
   * if (o.status === 'INVOICED') await fulfil(o);
   */
  async getOrderStatus(orderId: string, opts: CallOptions = {}): Promise<OrderStatusRecord> {
    return this.#transport.call({
      method: 'GET',
      path: `/api/v1/orders/${pathSegment('orderId', orderId)}`,
      auth: 'merchant',
      safe: true,
      expect: 200,
      check: ORDER_RECORD,
      ...opts,
    });
  }

  /**
   * Reads the payment record (`GET /api/v1/orders/{id}/proof`). Before a payment is confirmed the
   * server answers 404 with code `proof_not_available` (a {@link TollgateApiError}).
   *
   * @example
   * const { payload } = await tollgate.getOrderProof(orderId);
   * console.log(payload.tx_hash, payload.block_number); // verify on-chain independently
   */
  async getOrderProof(orderId: string, opts: CallOptions = {}): Promise<PaymentProof> {
    return this.#transport.call({
      method: 'GET',
      path: `/api/v1/orders/${pathSegment('orderId', orderId)}/proof`,
      auth: 'merchant',
      safe: true,
      expect: 200,
      check: PROOF,
      ...opts,
    });
  }

  /**
   * Cancels an unpaid CHECKOUT_VERIFIED order and releases its reserved fee (not a refund). Returns
   * the order record with status CANCELLED. Never retried; a non-cancellable order is a 400
   * `order_not_cancellable` naming the current state.
   *
   * @example
   * const cancelled = await tollgate.cancelOrder(staleOrderId); // cancelled.status === 'CANCELLED'
   */
  async cancelOrder(orderId: string, opts: CallOptions = {}): Promise<OrderStatusRecord> {
    const path = `/api/v1/orders/${pathSegment('orderId', orderId)}/cancel`;
    return this.#transport.call({
      method: 'POST',
      path,
      body: {},
      auth: 'merchant',
      safe: false,
      expect: 200,
      check: ORDER_RECORD,
      reference: { orderId },
      ...opts,
    });
  }

  /**
   * Accepts a late or under-payment recorded against the order
   * (`POST /api/v1/orders/{id}/accept-payment`): the order becomes INVOICED by that transfer, so
   * fulfil as for any INVOICED order. Only once the transfer is final; repeating the call for an
   * order already accepted returns the same record. Name the transfer (`txHash`, `logIndex`) when
   * several are recorded. Never retried automatically (repeat it yourself: it is idempotent).
   *
   * @example
   * const o = await tollgate.getOrderStatus(orderId);
   * if (o.needs_reconciliation) await tollgate.acceptPayment(orderId); // o.status becomes 'INVOICED'
   */
  async acceptPayment(orderId: string, params: AcceptPaymentParams = {}, opts: CallOptions = {}): Promise<OrderStatusRecord> {
    const path = `/api/v1/orders/${pathSegment('orderId', orderId)}/accept-payment`;
    const body: Record<string, unknown> = {};
    if (params.txHash !== undefined) body.tx_hash = params.txHash;
    if (params.logIndex !== undefined) body.log_index = params.logIndex;
    return this.#transport.call({
      method: 'POST',
      path,
      body,
      auth: 'merchant',
      safe: false,
      expect: 200,
      check: ORDER_RECORD,
      reference: { orderId },
      ...opts,
    });
  }

  /**
   * Refunds (part of) a paid order (`POST /api/v1/orders/{id}/refunds`, docs/refunds.md): a card
   * order through its processor, a DIRECT order by recording the refund you then send from the
   * wallet that was paid (the answer says what to send; `order.refunded` follows when the watcher
   * sees it), a FAILED DELEGATE order by the operator's executor. Never retried: each call is a new
   * refund, and the sum never exceeds what was paid (`refund_exceeds_payment`).
   *
   * @example
   * const r = await tollgate.refundOrder(orderId, { amount: '2.50' }); // r.status === 'pending' or 'succeeded'
   */
  async refundOrder(orderId: string, params: RefundParams = {}, opts: CallOptions = {}): Promise<Refund> {
    const path = `/api/v1/orders/${pathSegment('orderId', orderId)}/refunds`;
    const body: Record<string, unknown> = {};
    if (params.amount !== undefined) body.amount = params.amount;
    if (params.reason !== undefined) body.reason = params.reason;
    return this.#transport.call({ method: 'POST', path, body, auth: 'merchant', safe: false, expect: 200, check: REFUND, reference: { orderId }, ...opts });
  }

  /**
   * The refunds of an order, oldest first (`GET /api/v1/orders/{id}/refunds`).
   *
   * @example
   * const refunds = await tollgate.listRefunds(orderId); // [{ refund_id: 'rf_…', status: 'succeeded', … }]
   */
  async listRefunds(orderId: string, opts: CallOptions = {}): Promise<Refund[]> {
    const path = `/api/v1/orders/${pathSegment('orderId', orderId)}/refunds`;
    const out = await this.#transport.call({ method: 'GET', path, auth: 'merchant', safe: true, expect: 200, check: REFUNDS, ...opts });
    return out.refunds;
  }

  /**
   * Submits the payer's EIP-712 signature of `calldataSignRequest` for a DELEGATE order
   * (`POST /api/v1/orders/{id}/calldata-signature`). Never retried.
   *
   * @example
   * const signature = await wallet.signTypedData(order.calldataSignRequest!); // in the payer's wallet
   * await tollgate.submitCalldataSignature(order.orderId, signature);
   */
  async submitCalldataSignature(orderId: string, signature: string, opts: CallOptions = {}): Promise<CalldataSignatureResult> {
    const path = `/api/v1/orders/${pathSegment('orderId', orderId)}/calldata-signature`;
    return this.#transport.call({
      method: 'POST',
      path,
      body: calldataSignatureBody(signature),
      auth: 'merchant',
      safe: false,
      expect: 200,
      check: CALLDATA_OK,
      reference: { orderId },
      ...opts,
    });
  }

  /**
   * Submits the payer's signed EIP-3009 `transferWithAuthorization` for an `ERC20_3009` DELEGATE
   * order (`POST /api/v1/orders/{id}/authorization`, HTTP 202): the gateway relays it and pays the
   * gas; the order then follows its payment like a plain transfer. Never retried; a repeat of the
   * same authorization returns the same `tx_hash`.
   *
   * @example
   * const auth = await signEip3009Authorization(payerAccount, order, { name: 'USD Coin', version: '2' });
   * const { tx_hash } = await tollgate.submitAuthorization(order.orderId, auth);
   */
  async submitAuthorization(orderId: string, authorization: Eip3009Authorization, opts: CallOptions = {}): Promise<AuthorizationResult> {
    const path = `/api/v1/orders/${pathSegment('orderId', orderId)}/authorization`;
    return this.#transport.call({
      method: 'POST',
      path,
      body: authorizationBody(authorization),
      auth: 'merchant',
      safe: false,
      expect: 202,
      check: AUTHORIZATION_OK,
      reference: { orderId },
      ...opts,
    });
  }

  /**
   * Creates a hosted checkout session (`POST /api/v1/checkout/sessions`, HTTP 200). Give the
   * browser only `checkout_id`, `url` and `expires_at`. Never retried: an unknown outcome carries
   * `clientReferenceId`, and a reused one is a 409 `client_reference_id_conflict`.
   *
   * @example
   * const session = await tollgate.createCheckoutSession({ price: '9.99', clientReferenceId: cart.id,
   *   lineItems: [{ name: 'T-shirt', quantity: 1, amount: '9.99' }], publicMetadata: { sku: 'TS-1' } });
   * res.redirect(session.url);
   */
  async createCheckoutSession(params: CreateCheckoutSessionParams, opts: CallOptions = {}): Promise<CheckoutSession> {
    const body = checkoutSessionBody(params);
    return this.#transport.call({
      method: 'POST',
      path: '/api/v1/checkout/sessions',
      body,
      auth: 'merchant',
      safe: false,
      expect: 200,
      check: CHECKOUT,
      reference: { clientReferenceId: body.client_reference_id as string | undefined },
      ...opts,
    });
  }

  /**
   * Without an id: the authenticated merchant (`GET /api/v1/merchant`, signed) with its fee
   * balance. With an id: the public configuration of that merchant (`GET /merchants/{id}`, unsigned).
   * Read the accepted chains, tokens and decimals from here; never hard-code them.
   *
   * @example
   * const me = await tollgate.getMerchant();
   * const usdc = me.wallets.find((w) => w.chain_id === 2345 && w.token_symbol === 'USDC');
   * console.log('fee balance available:', me.fee_balance.available); // a decimal string
   */
  getMerchant(opts?: CallOptions): Promise<MerchantSelf>;
  getMerchant(merchantId: string, opts?: CallOptions): Promise<MerchantConfig>;
  async getMerchant(idOrOpts?: string | CallOptions, maybeOpts: CallOptions = {}): Promise<MerchantConfig | MerchantSelf> {
    if (typeof idOrOpts === 'string') {
      return this.#transport.call({
        method: 'GET',
        path: `/merchants/${pathSegment('merchantId', idOrOpts)}`,
        auth: 'public',
        safe: true,
        expect: 200,
        check: MERCHANT,
        ...maybeOpts,
      });
    }
    return this.#transport.call({
      method: 'GET',
      path: '/api/v1/merchant',
      auth: 'merchant',
      safe: true,
      expect: 200,
      check: MERCHANT_SELF,
      ...idOrOpts,
    });
  }

  /**
   * Polls {@link getOrderStatus} until the order is terminal and resolves with the final record:
   * INVOICED (fulfil), or EXPIRED / CANCELLED / FAILED (do not). Any valid jump is accepted, e.g.
   * CHECKOUT_VERIFIED → INVOICED without PAYMENT_CONFIRMED in between; `onStatusChange` hears
   * every change observed.
   *
   * @example
   * const final = await tollgate.waitForOrder(order.orderId, {
   *   intervalMs: 3000, timeoutMs: 15 * 60_000,
   *   onStatusChange: (o, prev) => log(`${order.orderId}: ${prev ?? '-'} → ${o.status}`),
   * });
   * if (final.status === 'INVOICED') await fulfilOnce(final.dapp_order_id);
   */
  async waitForOrder(orderId: string, opts: WaitForOrderOptions = {}): Promise<OrderStatusRecord> {
    pathSegment('orderId', orderId);
    return pollOrderUntilTerminal((o) => this.getOrderStatus(orderId, o), orderId, opts);
  }
}
