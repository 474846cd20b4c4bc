// What the quick-pay page derives from a session apart from its screens: its payment terms, the
// card screens' view of a card session (card.ts reads a CardStart), and what the receipt needs that a settled session's
// status no longer carries (amount, token and network, the payer's reference), kept in this tab's
// sessionStorage under the session id like the sent transaction (lib/terms.ts sentTx).
import { formatUnits } from '../lib/money.ts';
import { sessionIdFromHash, type PublicLink, type QuickPaySession } from '../lib/quickpay.ts';
import { optionKey, type Terms } from '../lib/terms.ts';
import { networkName } from '../lib/chains.ts';
import type { CardStart } from '../lib/types.ts';
import { sessionStore as storage } from './dom.ts';

/** A card session's state as the card screens read it (CardStart). */
export function cardStart(s: QuickPaySession, link: PublicLink): CardStart {
  const t = s.terms;
  return {
    order_id: s.order_id ?? t?.order_id ?? '',
    processor: t?.processor ?? 'TEST',
    currency: link.fiat_currency ?? '',
    amount: link.fiat_amount ?? '',
    order_status: s.order_status ?? 'CHECKOUT_VERIFIED',
    // The session's card terms say what the processor needs (Tollgate's form, or its own page)
    // and whether a payment is already under way (processing: wait, never pay again).
    payment_state: t?.payment_state ?? 'pending',
    expires_at: t?.expires_at ?? 0,
    next_action: t?.next_action ?? { type: 'card_form' },
  };
}

/** The payment terms of an OPEN crypto session, named and linked from the link's options. */
export function sessionTerms(s: QuickPaySession, link: PublicLink): Terms | undefined {
  const t = s.terms;
  const o = t && link.payment_options.find((p) => optionKey(p) === optionKey(t));
  if (!t) return undefined;
  return {
    orderId: t.order_id,
    chainId: t.chain_id,
    chainName: o ? networkName(o) : `Chain ${t.chain_id}`,
    ...(o?.explorer_url ? { explorerUrl: o.explorer_url } : {}),
    tokenSymbol: t.token_symbol,
    tokenContract: t.token_contract,
    decimals: t.decimals,
    payTo: t.pay_to_address,
    amountWei: t.amount_wei,
    expiresAt: t.expires_at,
    // Solana: the order's transfer request (its reference key attributes the payment); only a solana: URL.
    ...(t.payment_url?.startsWith('solana:') ? { paymentUrl: t.payment_url } : {}),
  };
}

/** What the receipt shows of a crypto session after a reload. */
export interface Kept {
  amount?: string;
  method?: string;
  memo?: string;
}

const keptKey = () => `tollgate:qp:${sessionIdFromHash(location.hash) ?? ''}`;

/** Notes the session's terms (call once the fragment names the session). */
export function remember(t: Terms, memo: string | undefined) {
  try {
    storage()?.setItem(keptKey(), JSON.stringify({ amount: `${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}`, method: `${t.tokenSymbol} on ${t.chainName}`, memo }));
  } catch {
    /* storage full or refused: the receipt shows less */
  }
}

/** What remember() noted for the session in the fragment, if anything. */
export function recall(): Kept | undefined {
  try {
    const v: unknown = JSON.parse(storage()?.getItem(keptKey()) ?? 'null');
    return v && typeof v === 'object' ? (v as Kept) : undefined;
  } catch {
    return undefined;
  }
}
