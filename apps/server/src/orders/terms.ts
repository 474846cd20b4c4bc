import type { OrderRow } from './repo.ts';

/**
 * The 402 payment-required body of `POST /api/v1/orders` (docs/orders.md; an x402 v2 body with Tollgate's extensions). Pure:
 * the same order and clock give the same bytes, which the `PAYMENT-REQUIRED` header carries in
 * base64.
 */
export interface PaymentTerms {
  x402Version: 2;
  resource: { url: string; description: string; mimeType: 'application/json' };
  accepts: [
    {
      scheme: 'exact';
      network: string;
      amount: string;
      asset: string;
      payTo: string;
      maxTimeoutSeconds: number;
      extra: { flow: string; tokenSymbol: string; decimals: number };
    },
  ];
  extensions: {
    /** the same object as `paymentTerms`, under the name GOAT's SDKs read (docs/migrating.md) */
    goatx402: PaymentTerms['extensions']['paymentTerms'];
    paymentTerms: {
      destinationChain: string;
      expiresAt: number;
      paymentMethod: 'transfer';
      receiveType: 'DIRECT' | 'DELEGATE';
      signatureEndpoint?: string;
      /** Solana: the Solana Pay transfer request (`solana:` URL) a wallet opens (docs/solana.md) */
      paymentUrl?: string;
      /** SOL_APPROVE_XFER: the `approveChecked` the payer signs instead of a transfer (docs/solana.md) */
      approve?: Record<string, unknown>;
    };
  };
  order_id: string;
  flow: string;
  token_symbol: string;
  calldata_sign_request?: unknown;
}

/**
 * `extensions.paymentTerms` of the 402 body. GOAT Network's own server SDKs (TypeScript 0.1.0–0.4.0
 * and Go) read the same object under `extensions.goatx402` (`expiresAt`, `destinationChain`), so the
 * body carries it under both names (docs/migrating.md): one object, serialized twice.
 */
type PaymentTermsExtension = PaymentTerms['extensions']['paymentTerms'];

/** What the terms are built from: the order as created (see orders/repo.ts `CreatedOrder`). */
export type TermsOrder = Pick<OrderRow, 'id' | 'dapp_order_id' | 'flow' | 'chain_id' | 'pay_to_chain_id' | 'token_symbol' | 'token_contract' | 'decimals' | 'pay_to_address' | 'amount_wei' | 'expires_at'>;

export function buildPaymentTerms(
  order: TermsOrder,
  opts: {
    baseUrl: string;
    nowMs: number;
    receiveType: 'DIRECT' | 'DELEGATE';
    /** DELEGATE with callback_calldata */
    calldataSignRequest?: unknown;
    /** CAIP-2 of the chain (default `eip155:<chain_id>`) */
    network?: string;
    paymentUrl?: string | undefined;
    approve?: Record<string, unknown> | undefined;
  },
): PaymentTerms {
  const network = opts.network ?? `eip155:${order.chain_id}`;
  const expiresAt = Math.floor(order.expires_at.getTime() / 1000);
  const signed = opts.calldataSignRequest !== undefined;
  const extension: PaymentTermsExtension = {
    // DIRECT orders pay on their own chain (pay_to_chain_id = chain_id).
    destinationChain: opts.network && order.pay_to_chain_id === order.chain_id ? network : `eip155:${order.pay_to_chain_id}`,
    expiresAt,
    paymentMethod: 'transfer',
    receiveType: opts.receiveType,
    ...(signed ? { signatureEndpoint: `${opts.baseUrl}/api/v1/orders/${order.id}/calldata-signature` } : {}),
    ...(opts.paymentUrl ? { paymentUrl: opts.paymentUrl } : {}),
    ...(opts.approve ? { approve: opts.approve } : {}),
  };
  return {
    x402Version: 2,
    resource: {
      url: `${opts.baseUrl}/api/v1/orders/${order.id}`,
      description: `Payment for order ${order.dapp_order_id}`,
      mimeType: 'application/json',
    },
    accepts: [
      {
        scheme: 'exact',
        network,
        amount: order.amount_wei,
        asset: order.token_contract,
        payTo: order.pay_to_address,
        // At least 1: x402 requires a positive number, and an order created in its last second is
        // still live for that second (the expiry worker, not these terms, ends it).
        maxTimeoutSeconds: Math.max(1, expiresAt - Math.floor(opts.nowMs / 1000)),
        extra: { flow: order.flow, tokenSymbol: order.token_symbol, decimals: order.decimals },
      },
    ],
    extensions: { paymentTerms: extension, goatx402: extension },
    order_id: order.id,
    flow: order.flow,
    token_symbol: order.token_symbol,
    ...(signed ? { calldata_sign_request: opts.calldataSignRequest } : {}),
  };
}

/**
 * The 402 body as JSON text and the `PAYMENT-REQUIRED` header value, base64 (standard alphabet) of
 * the same bytes: one serialization for both, so the two can never differ.
 */
export function paymentRequired(terms: PaymentTerms): { json: string; header: string } {
  const json = JSON.stringify(terms);
  return { json, header: Buffer.from(json, 'utf8').toString('base64') };
}
