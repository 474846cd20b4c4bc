import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { ChainAddress } from '../../http/schemas.ts';
import { chainById } from '../../chain/registry.ts';
import { buildPaymentTerms, paymentRequired } from '../terms.ts';

const Body = Type.Object(
  {
    dapp_order_id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$', description: "merchant's unique, stable order id (printable ASCII, no spaces)" }),
    chain_id: Type.Integer({ minimum: 1 }),
    token_symbol: Type.String({ minLength: 1, maxLength: 11 }),
    token_contract: Type.Optional(ChainAddress),
    from_address: Type.String({ maxLength: 44, description: 'the payer: a 0x EVM address, or a base58 public key on a Solana chain' }),
    amount_wei: Type.String({ minLength: 1, maxLength: 78, description: 'integer amount in the smallest unit' }),
    callback_calldata: Type.Optional(Type.String({ pattern: '^0x([0-9a-fA-F]{2})*$', maxLength: 20_000 })),
    merchant_id: Type.Optional(Type.String({ maxLength: 64 })),
    recover_existing_order: Type.Optional(
      Type.Boolean({
        description: 'true: an order this merchant already created with the same dapp_order_id and the same terms, still CHECKOUT_VERIFIED, is answered again (402) instead of 409 order_already_exists',
      }),
    ),
  },
  { additionalProperties: false },
);

const TermsExtension = Type.Object(
  {
    destinationChain: Type.String({ description: 'CAIP-2 of the chain the merchant is paid on' }),
    expiresAt: Type.Integer({ description: 'Unix seconds' }),
    paymentMethod: Type.String(),
    receiveType: Type.String({ description: 'DIRECT | DELEGATE' }),
    signatureEndpoint: Type.Optional(Type.String({ description: 'DELEGATE with callback_calldata: where the payer signature goes' })),
    paymentUrl: Type.Optional(Type.String({ description: 'Solana: the Solana Pay transfer request' })),
    approve: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'SOL_APPROVE_XFER: the approval the payer signs' })),
  },
  { additionalProperties: true },
);

/** The 402 body (orders/terms.ts builds it; docs/orders.md, docs/migrating.md). */
const PaymentRequired = Type.Object(
  {
    x402Version: Type.Integer(),
    resource: Type.Object({ url: Type.String(), description: Type.String(), mimeType: Type.String() }),
    accepts: Type.Array(
      Type.Object({
        scheme: Type.String(),
        network: Type.String(),
        amount: Type.String(),
        asset: Type.String(),
        payTo: Type.String(),
        maxTimeoutSeconds: Type.Integer(),
        extra: Type.Object({ flow: Type.String(), tokenSymbol: Type.String(), decimals: Type.Integer() }),
      }),
    ),
    extensions: Type.Object({
      paymentTerms: TermsExtension,
      // the same object again, under the name GOAT Network's server SDKs read (docs/migrating.md)
      goatx402: TermsExtension,
    }),
    order_id: Type.String(),
    flow: Type.String(),
    token_symbol: Type.String(),
    calldata_sign_request: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'DELEGATE with callback_calldata: EIP-712 typed data the payer signs' })),
  },
  { additionalProperties: true, description: 'x402 v2 payment-required body, also base64 in the PAYMENT-REQUIRED header (docs/orders.md)' },
);

export const createOrder = defineRoute({
  method: 'POST',
  url: '/api/v1/orders',
  auth: 'merchant',
  summary: 'Create a payment order; success is HTTP 402 with the payment terms (also in the PAYMENT-REQUIRED header)',
  tags: ['orders'],
  body: Body,
  response: { 402: PaymentRequired },
  errors: [403, 409],
  // The nonce is consumed by the statement that creates the order: one commit per request.
  nonceInHandler: true,
  async handler(req, reply, deps) {
    const b = req.body;
    const out = await deps.orders.createOrder({
      merchantId: req.merchant.merchantId,
      receiveType: req.merchant.receiveType,
      dappOrderId: b.dapp_order_id,
      chainId: b.chain_id,
      tokenSymbol: b.token_symbol,
      tokenContract: b.token_contract,
      fromAddress: b.from_address,
      amountWei: b.amount_wei,
      callbackCalldata: b.callback_calldata,
      bodyMerchantId: b.merchant_id,
      recoverExisting: b.recover_existing_order === true,
      nonce: req.merchant.nonce,
    });
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    const c = chainById(deps.config, out.order.chain_id);
    const terms = buildPaymentTerms(out.order, {
      baseUrl: deps.config.publicBaseUrl,
      nowMs: deps.clock.now(),
      receiveType: req.merchant.receiveType,
      calldataSignRequest: out.calldataSignRequest,
      ...(c ? { network: c.family.network(c.chain) } : {}),
      ...(c?.family.paymentUrl ? { paymentUrl: c.family.paymentUrl(c.chain, out.order) } : {}),
      ...(c?.family.approvalTerms ? { approve: await c.family.approvalTerms(c.chain, out.order) } : {}),
    });
    const { json, header } = paymentRequired(terms);
    // Already JSON: a string payload with a JSON content type is sent as is, not re-serialized.
    reply.status(402).header('payment-required', header).type('application/json; charset=utf-8');
    return json;
  },
});
