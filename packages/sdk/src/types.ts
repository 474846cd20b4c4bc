// Parameter and record types. Parameters are camelCase (docs/migrating.md); records
// the server returns keep their snake_case wire names (docs/orders.md), so an order from getOrderStatus and the
// `payload` of an `order.*` webhook are the same shape and one fulfilment function takes both.
// The one normalized shape is createOrder's result (docs/orders.md "Creating an order").

import type { OrderStatus } from './protocol.ts';

/**
 * Order states (docs/orders.md "Lifecycle") and the terminal ones: the wire's lists, from
 * @tollgate/protocol. A terminal state is one the gateway never leaves by itself; INVOICED is the only
 * one that permits fulfilment, and the merchant may still move EXPIRED or CANCELLED to INVOICED by
 * accepting a late payment (`acceptPayment`).
 */
export {
  isTerminalOrderStatus,
  ORDER_STATUSES,
  TERMINAL_ORDER_STATUSES,
  type OrderStatus,
  type QuickPayStatus,
  type TerminalOrderStatus,
} from './protocol.ts';

/** Payment flows (docs/orders.md, docs/delegate.md, docs/solana.md). */
export type OrderFlow = 'ERC20_DIRECT' | 'ERC20_3009' | 'ERC20_APPROVE_XFER' | 'SOL_DIRECT' | 'SOL_APPROVE_XFER' | (string & {});

/** `createOrder` parameters; mapped 1:1 onto the snake_case fields of `POST /api/v1/orders`. */
export interface CreateOrderParams {
  /** Your own unique, stable order id (printable ASCII). A duplicate is rejected with 409, not replayed. */
  dappOrderId: string;
  /** Payer (source) chain, from the merchant configuration. Sent as a JSON integer. */
  chainId: number;
  /** Token symbol; it selects the token. */
  tokenSymbol: string;
  /** Token contract; optional, checked against the symbol, never a selector. */
  tokenContract?: string | undefined;
  /** Payer address. */
  fromAddress: string;
  /** Integer amount in the token's smallest unit, as a decimal string or a bigint (never a number). */
  amountWei: string | bigint;
  /** DELEGATE mode only: calldata for the merchant's callback contract (0x hex). */
  callbackCalldata?: string | undefined;
  /** Required by some environments; must be the merchant of the API key. */
  merchantId?: string | undefined;
}

/** EIP-712 typed data to be signed by the payer (docs/delegate.md). */
export interface CalldataSignRequest {
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, string>;
}

/** The raw 402 body of `POST /api/v1/orders` (an x402 v2 payment-required body, docs/orders.md). */
export interface PaymentRequiredBody {
  x402Version: number;
  resource: { url: string; description: string; mimeType: string };
  accepts: {
    scheme: string;
    /** CAIP-2 of the chain: `eip155:<chain id>`, or `solana:<genesis hash prefix>` for a Solana cluster */
    network: string;
    amount: string;
    asset: string;
    payTo: string;
    maxTimeoutSeconds: number;
    extra: { flow: string; tokenSymbol: string; decimals: number };
  }[];
  extensions: {
    paymentTerms: {
      /** CAIP-2 of the pay-to chain (`eip155:<chain id>` or `solana:…`) */
      destinationChain: string;
      expiresAt: number;
      paymentMethod: string;
      receiveType: 'DIRECT' | 'DELEGATE' | (string & {});
      signatureEndpoint?: string;
      /** Solana: the Solana Pay transfer request URL (`solana:<recipient>?amount=…&spl-token=…&reference=…`) a wallet opens */
      paymentUrl?: string;
      /** SOL_APPROVE_XFER: the `approveChecked` the payer signs instead of a transfer (docs/solana.md) */
      approve?: Record<string, unknown>;
    };
  };
  order_id: string;
  flow: OrderFlow;
  token_symbol: string;
  calldata_sign_request?: CalldataSignRequest;
}

/** What `createOrder` returns: the normalized payment terms (docs/orders.md) plus the raw 402 body. */
export interface CreatedOrder {
  orderId: string;
  flow: OrderFlow;
  tokenSymbol: string;
  tokenContract: string;
  /** The address the payer must transfer to (merchant wallet or settlement address). */
  payToAddress: string;
  /** CAIP-2 network of the order (`accepts[0].network`): `eip155:<chain id>` or `solana:…` */
  network: string;
  /** Tollgate's chain id of the order (the one you created it with; for EVM also the eip155 id). */
  fromChainId: number;
  payToChainId: number;
  /** Integer amount in the token's smallest unit (a string: JSON-safe for your frontend). */
  amountWei: string;
  /** Token decimals for display (`accepts[0].extra.decimals`). */
  decimals: number;
  /** Unix seconds. */
  expiresAt: number;
  /** Solana orders: the Solana Pay URL a wallet opens (`extensions.paymentTerms.paymentUrl`). */
  paymentUrl?: string;
  /** SOL_APPROVE_XFER orders: the approval the payer signs (`extensions.paymentTerms.approve`). */
  approve?: Record<string, unknown>;
  /** Present for callback-enabled DELEGATE orders: have the payer sign it, then submitCalldataSignature. */
  calldataSignRequest?: CalldataSignRequest;
  /** The raw 402 body exactly as parsed. */
  x402: PaymentRequiredBody;
}

/**
 * A transfer recorded against an order (docs/attribution.md): `matched` pays it; `late` (exact
 * terms after expiry or cancellation), `underpaid` (short beyond the merchant's tolerance) and
 * `duplicate` (the order was already paid) never do unless the merchant accepts a late or
 * under-payment with `acceptPayment`.
 */
export interface ObservedTransfer {
  tx_hash: string;
  log_index: number;
  block_number: number;
  from_address: string;
  amount_wei: string;
  kind: 'matched' | 'underpaid' | 'late' | 'duplicate' | (string & {});
  /** A reorg removed it from the chain: it pays nothing and cannot be accepted. */
  orphaned: boolean;
  /** The merchant accepted it: the order is INVOICED by this transfer. */
  accepted: boolean;
  /** Blocks on top of it, this one included, as far as the gateway has scanned. */
  confirmations: number;
}

/** `acceptPayment` parameters: which recorded transfer, needed only when several could be accepted. */
/** `POST /api/v1/orders/{id}/refunds` (docs/refunds.md). */
export interface RefundParams {
  /** Decimal string in the order's currency or token; default: everything not yet refunded. */
  amount?: string | undefined;
  reason?: string | undefined;
}

/**
 * A refund of any rail (`rail`: card, direct, delegate), as answered by the refund routes and sent
 * in `order.refunded`. A DIRECT refund is `pending` until the watcher sees `amount_base_units` of
 * `token_contract` go from `from_address` to `to_address`; send exactly that.
 */
export interface Refund {
  refund_id: string;
  order_id: string;
  rail: 'card' | 'direct' | 'delegate';
  amount: string;
  amount_base_units: string;
  currency: string;
  status: 'pending' | 'succeeded' | 'failed';
  reason?: string;
  requested_by: 'merchant' | 'operator' | 'processor';
  processor_refund_id?: string;
  chain_id?: number;
  token_contract?: string;
  from_address?: string;
  to_address?: string;
  tx_hash?: string;
  created_at: string;
  completed_at?: string;
  order_status: string;
  /** total refunded (succeeded) on the order so far */
  refunded_amount: string;
}

export interface AcceptPaymentParams {
  txHash?: string | undefined;
  logIndex?: number | undefined;
}

/** The order status record (docs/orders.md; `GET /api/v1/orders/{id}`, cancel response, `order.*` webhook payload). */
export interface OrderStatusRecord {
  order_id: string;
  merchant_id: string;
  dapp_order_id: string;
  flow: OrderFlow;
  chain_id: number;
  pay_to_chain_id: number;
  token_symbol: string;
  token_contract: string;
  from_address: string;
  pay_to_address: string;
  amount_wei: string;
  /** An {@link OrderStatus}; a newer server may add values, which are treated as non-terminal. */
  status: OrderStatus | (string & {});
  /** Unix seconds. */
  expires_at: number;
  created_at: string;
  updated_at: string;
  tx_hash?: string;
  log_index?: number;
  block_number?: number;
  confirmations?: number;
  paid_amount_wei?: string;
  confirmed_at?: string;
  invoiced_at?: string;
  failure_reason?: string;
  checkout_id?: string;
  /** DELEGATE orders: `pending`, `succeeded` or `failed`. */
  callback_status?: 'pending' | 'succeeded' | 'failed';
  /** DELEGATE orders: the settlement transaction (payout and callback in one transaction). */
  settlement_tx_hash?: string;
  /** DELEGATE orders: when the settlement reached finality (the order is INVOICED then). */
  settled_at?: string;
  /** DELEGATE orders: the operator's refund of a FAILED order to its payer. */
  refund_tx_hash?: string;
  /** Present (true) while a late, under- or duplicate payment recorded against the order is neither accepted nor orphaned. */
  needs_reconciliation?: boolean;
  observed_transfers?: ObservedTransfer[];
}

/** Payload of `order.late_payment`, `order.underpaid` and `order.duplicate_payment`: the record plus the transfer. */
export interface RecordedPaymentPayload extends OrderStatusRecord {
  needs_reconciliation: true;
  transfer: ObservedTransfer;
}

/** The payment record (docs/orders.md; `GET /api/v1/orders/{id}/proof`). `signature` is an unsigned keccak256 hash. */
export interface PaymentProof {
  payload: {
    order_id: string;
    tx_hash: string;
    log_index: number;
    from_addr: string;
    to_addr: string;
    amount_wei: string;
    from_chain_id: number;
    token_contract: string;
    block_number: number;
    status: string;
  };
  signature: string;
}

/** One receiving wallet of a merchant (a payment option). */
export interface MerchantWallet {
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals?: number;
  address: string;
}

/** The merchant configuration (docs/migrating.md; `GET /merchants/{merchant_id}`). */
export interface MerchantConfig {
  merchant_id: string;
  name: string;
  logo_url?: string;
  receive_type: 'DIRECT' | 'DELEGATE' | (string & {});
  payment_methods: ('crypto' | 'fiat' | (string & {}))[];
  wallets: MerchantWallet[];
}

/** The authenticated merchant (`GET /api/v1/merchant`): configuration plus fee balance (decimal strings). */
export interface MerchantSelf extends MerchantConfig {
  fee_balance: { available: string; reserved: string; captured: string };
}

export type PaymentRail = 'crypto' | 'fiat';

/** One line item of a checkout session (docs/migrating.md). */
export interface LineItem {
  name: string;
  quantity: number;
  /** Decimal string, e.g. `"9.99"`. */
  amount: string;
  [field: string]: unknown;
}

/** `createCheckoutSession` parameters (docs/migrating.md). */
export interface CreateCheckoutSessionParams {
  /** Defaults to `DIRECT`, the only public checkout type. */
  checkoutType?: 'DIRECT' | undefined;
  /** Sent comma-joined (`crypto,fiat`); the server defaults to crypto when omitted. */
  paymentRails?: readonly PaymentRail[] | undefined;
  /** Decimal string; required when crypto is offered. */
  price?: string | undefined;
  fiatCurrency?: string | undefined;
  /** Positive decimal string; independent of the crypto price. */
  fiatAmount?: string | undefined;
  /** Your correlation reference (≤ 200 characters); reusing a non-empty one gives 409. Set it: it is how you reconcile. */
  clientReferenceId?: string | undefined;
  /** Requested lifetime in integer seconds; the returned `expires_at` is authoritative. */
  expiresIn?: number | undefined;
  /** Serialized once into `line_items_json`. */
  lineItems?: readonly LineItem[] | undefined;
  /** Serialized once into `public_metadata_json`; publicly visible, no secrets. */
  publicMetadata?: Record<string, unknown> | undefined;
  /** Serialized once into `private_metadata_json`. */
  privateMetadata?: Record<string, unknown> | undefined;
  successUrl?: string | undefined;
  cancelUrl?: string | undefined;
}

/** `POST /api/v1/checkout/sessions` 200 body. `checkout_id` and `url` are bearer capabilities. */
export interface CheckoutSession {
  checkout_id: string;
  checkout_type: 'DIRECT' | (string & {});
  url: string;
  /** Unix seconds; authoritative. */
  expires_at: number;
}

/** `POST /api/v1/orders/{id}/calldata-signature` 200 body. */
export interface CalldataSignatureResult {
  status: 'ok';
  order_id: string;
}

/**
 * A payer-signed EIP-3009 `transferWithAuthorization` for an `ERC20_3009` DELEGATE order, as
 * `submitAuthorization` sends it (`signEip3009Authorization` builds it). uint256 values are
 * decimal strings.
 */
export interface Eip3009Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  /** 32-byte random nonce, 0x hex. */
  nonce: string;
  /** 65-byte signature, 0x hex. */
  signature: string;
}

/** `submitAuthorization` (HTTP 202): the relay transaction is recorded and broadcast. */
export interface AuthorizationResult {
  status: 'accepted';
  order_id: string;
  /** The gateway's relay transaction (it pays the gas). */
  tx_hash: string;
}

/** Per-call options of every client method. */
export interface CallOptions {
  /** Aborts the call. For a create/cancel/submit already sent, the result is an unknown outcome. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number | undefined;
}
