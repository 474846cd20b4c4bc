import { Type } from '@sinclair/typebox';
import type { ChainConfig } from '../config/schema.ts';
import type { SessionWithOrder } from './repo.ts';
import { effectiveStatus } from './states.ts';

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * The response schemas double as the redaction: fastify serializes a response through its schema
 * (fast-json-stringify), so a field that is not listed here cannot leave the server even if a
 * future change put it in the returned object. `public_metadata` is the one open object: it is
 * public by contract.
 */
const LineItemSchema = Type.Object({ name: Type.String(), quantity: Type.Integer(), amount: Type.Optional(Type.String({ description: 'price of ONE unit (decimal string)' })) });

const PaymentOptionSchema = Type.Object({
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  decimals: Type.Integer(),
  amount_wei: Type.String({ description: '`price` in this token’s smallest unit' }),
  chain_name: Type.Optional(Type.String({ description: 'display name of the network (from configuration)' })),
  explorer_url: Type.Optional(Type.String({ description: 'block explorer base URL; a transaction is at `<explorer_url>/tx/<hash>`' })),
  wallet_chain: Type.Optional(Type.String({ description: 'Solana: the Wallet Standard chain wallets know the cluster by (`solana:mainnet`, `solana:devnet`, `solana:testnet`, `solana:localnet`)' })),
});

export const PublicSessionSchema = Type.Object(
  {
    checkout_id: Type.String(),
    checkout_type: Type.String(),
    status: Type.String({ description: 'session status: OPEN, BOUND, COMPLETED, EXPIRED, CANCELLED, FAILED (SIGNED: compatibility only)' }),
    expires_at: Type.Integer({ description: 'Unix seconds' }),
    merchant: Type.Object({ merchant_id: Type.String(), name: Type.String(), logo_url: Type.Optional(Type.String()) }),
    line_items: Type.Array(LineItemSchema),
    price: Type.Optional(Type.String()),
    payment_rails: Type.Array(Type.String(), { description: 'the rails offered, e.g. ["crypto", "fiat"]' }),
    fiat_currency: Type.Optional(Type.String()),
    fiat_amount: Type.Optional(Type.String()),
    public_metadata: Type.Object({}, { additionalProperties: true }),
    payment_options: Type.Array(PaymentOptionSchema),
    order: Type.Optional(
      Type.Object({
        order_id: Type.String(),
        status: Type.String({ description: 'order status' }),
        flow: Type.Optional(Type.String({ description: 'FIAT_<PROCESSOR> for a card order (chain_id 0, no pay-to address to pay)' })),
        chain_id: Type.Integer(),
        token_symbol: Type.String(),
        pay_to_address: Type.String(),
        amount_wei: Type.String(),
        expires_at: Type.Integer(),
        payment_url: Type.Optional(Type.String({ description: 'Solana: the order’s Solana Pay transfer request (`solana:` URL)' })),
      }),
    ),
    success_url: Type.Optional(Type.String({ description: 'where the hosted page sends the payer after completion' })),
    cancel_url: Type.Optional(Type.String({ description: 'where the hosted page sends a payer who gives up' })),
  },
  { description: 'Public session view. Never private metadata, client_reference_id, the return-URL allowlist or credentials.' },
);

/**
 * The public view of a session (what the hosted page reads, docs/hosted-checkout.md). `success_url` / `cancel_url` are included (optional): the hosted page needs
 * them to redirect the payer, they were chosen by the merchant for the payer's browser, and the
 * allowlist they were checked against is not shown. `payment_rails` is an array here: the
 * comma-joined string is a rule of the signed request body only.
 */
export function publicSessionView(
  v: SessionWithOrder,
  nowMs: number,
  chains: readonly (Pick<ChainConfig, 'chainId' | 'name' | 'explorerUrl'> & { walletChain?: string })[] = [],
  paymentUrl: (o: NonNullable<SessionWithOrder['order']>) => string | undefined = () => undefined,
) {
  const s = v.session;
  // Names and explorers come from the current configuration, not the stored snapshot: they are
  // display data, and an operator who adds an explorer wants it on sessions already open.
  const chainOf = (id: number) => chains.find((c) => c.chainId === id);
  const o = v.order;
  return {
    checkout_id: s.id,
    checkout_type: s.checkout_type,
    status: effectiveStatus({ status: s.status, expiresAt: s.expires_at }, o && { status: o.status, paymentSeen: o.payment_seen }, nowMs),
    expires_at: unix(s.expires_at),
    merchant: { merchant_id: v.merchant.id, name: v.merchant.name, ...(v.merchant.logo_url ? { logo_url: v.merchant.logo_url } : {}) },
    line_items: s.line_items,
    ...(s.price !== null ? { price: s.price } : {}),
    payment_rails: s.payment_rails,
    ...(s.fiat_currency !== null ? { fiat_currency: s.fiat_currency } : {}),
    ...(s.fiat_amount !== null ? { fiat_amount: s.fiat_amount } : {}),
    public_metadata: s.public_metadata,
    payment_options: s.payment_options.map((p) => {
      const c = chainOf(p.chain_id);
      return { ...p, ...(c ? { chain_name: c.name } : {}), ...(c?.explorerUrl ? { explorer_url: c.explorerUrl } : {}), ...(c?.walletChain ? { wallet_chain: c.walletChain } : {}) };
    }),
    ...(o
      ? {
          order: {
            order_id: o.id,
            status: o.status,
            // only for card orders: a crypto order's view is unchanged
            ...(o.flow.startsWith('FIAT_') ? { flow: o.flow } : {}),
            chain_id: o.chain_id,
            token_symbol: o.token_symbol,
            pay_to_address: o.pay_to_address,
            amount_wei: o.amount_wei,
            expires_at: unix(o.expires_at),
            ...(() => {
              const url = o.flow.startsWith('FIAT_') ? undefined : paymentUrl(o);
              return url ? { payment_url: url } : {};
            })(),
          },
        }
      : {}),
    ...(s.success_url !== null ? { success_url: s.success_url } : {}),
    ...(s.cancel_url !== null ? { cancel_url: s.cancel_url } : {}),
  };
}

export const SessionStatusSchema = Type.Object(
  {
    status: Type.String({ description: 'session status' }),
    order_id: Type.Optional(Type.String()),
    order_status: Type.Optional(Type.String({ description: 'status of the associated order' })),
    tx_hash: Type.Optional(Type.String({ description: 'not a card settlement identifier' })),
  },
  { additionalProperties: false },
);

/** The status projection the page polls: exactly status, order_id?, order_status?, tx_hash?. */
export function sessionStatusProjection(v: SessionWithOrder, nowMs: number) {
  const s = v.session;
  const o = v.order;
  return {
    status: effectiveStatus({ status: s.status, expiresAt: s.expires_at }, o && { status: o.status, paymentSeen: o.payment_seen }, nowMs),
    ...(o ? { order_id: o.id, order_status: o.status } : {}),
    ...(o?.tx_hash ? { tx_hash: o.tx_hash } : {}),
  };
}

export const BindResponseSchema = Type.Object({
  order_id: Type.String(),
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  pay_to_address: Type.String(),
  amount_wei: Type.String(),
  expires_at: Type.Integer({ description: 'Unix seconds: the order’s payment window (≤ the session’s expires_at)' }),
  payment_url: Type.Optional(Type.String({ description: 'Solana: the Solana Pay transfer request (`solana:` URL) carrying the order’s reference key' })),
});
