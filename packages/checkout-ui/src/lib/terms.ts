import { networkName } from './chains.ts';
import type { PaymentOption } from './types.ts';

/** The payment terms of the order being paid, in the page's own camelCase shape. */
export interface Terms {
  orderId: string;
  chainId: number;
  chainName: string;
  explorerUrl?: string;
  tokenSymbol: string;
  tokenContract: string;
  decimals: number;
  payTo: string;
  amountWei: string;
  /** Unix seconds: the order's payment window */
  expiresAt: number;
  /** Solana: the server's `solana:` transfer request, shown instead of an EIP-681 link */
  paymentUrl?: string;
}

/** A connected wallet, ready to pay: its paying address, and a way to send a bound order's payment (resolves to the transaction hash or signature). */
export interface PreparedWallet {
  from: string;
  send(t: Terms): Promise<string>;
}

export const optionKey = (o: { chain_id: number; token_symbol: string }) => `${o.chain_id}:${o.token_symbol}`;

/**
 * Terms from a bind answer or from the public view's `order` (which has no token contract), with
 * the token's decimals and contract from the matching payment option. Undefined when the session
 * offers no such option (the order cannot be shown correctly, so it is not shown).
 */
export function termsFor(options: readonly PaymentOption[], t: { order_id: string; chain_id: number; token_symbol: string; pay_to_address: string; amount_wei: string; expires_at: number; token_contract?: string; payment_url?: string }): Terms | undefined {
  const o = options.find((p) => optionKey(p) === optionKey(t));
  if (!o) return undefined;
  return {
    orderId: t.order_id,
    chainId: t.chain_id,
    chainName: networkName(o),
    ...(o.explorer_url ? { explorerUrl: o.explorer_url } : {}),
    tokenSymbol: t.token_symbol,
    tokenContract: t.token_contract ?? o.token_contract,
    decimals: o.decimals,
    payTo: t.pay_to_address,
    amountWei: t.amount_wei,
    expiresAt: t.expires_at,
    // Only a solana: URL: the page never renders a link of another scheme from the server.
    ...(t.payment_url?.startsWith('solana:') ? { paymentUrl: t.payment_url } : {}),
  };
}

/**
 * The transaction hash a wallet returned for an order, kept in sessionStorage (this tab only) so a
 * reload before the watcher has seen the transfer does not invite a second payment. Keyed by
 * order id, which is not a bearer capability.
 */
export const sentTx = {
  get(storage: Pick<Storage, 'getItem'> | undefined, orderId: string): string | undefined {
    try {
      const v = storage?.getItem(`tollgate:tx:${orderId}`);
      // an EVM transaction hash, or a Solana signature (64 bytes in base58)
      return v && /^(0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/.test(v) ? v : undefined;
    } catch {
      return undefined; // storage disabled
    }
  },
  set(storage: Pick<Storage, 'setItem'> | undefined, orderId: string, hash: string): void {
    try {
      storage?.setItem(`tollgate:tx:${orderId}`, hash);
    } catch {
      /* storage disabled or full: the status projection's tx_hash takes over */
    }
  },
};
