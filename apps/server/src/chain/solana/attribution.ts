/**
 * The Solana attribution rule (pure): a transfer belongs to an order only through a reference key
 * the transfer instruction carries — never by amount or sender. Once a reference names an order, the
 * transfer must also be of the order's mint, into the order's token account, for at least its
 * amount as RECEIVED (after any Token-2022 transfer fee). The identity of a transfer is
 * `signature + instruction index`; the caller records it once (a unique key), so one transfer never
 * pays two orders and a re-read transaction never pays twice.
 */
import type { SolanaTransfer } from './decode.ts';

export interface SolanaOrderTerms {
  orderId: string;
  reference: string;
  /** base58 mint */
  mint: string;
  /** the merchant wallet's associated token account for the mint */
  payTo: string;
  amount: bigint;
}

export type Attribution =
  | { kind: 'paid'; order: SolanaOrderTerms; received: bigint; overpaid: boolean }
  | { kind: 'underpaid'; order: SolanaOrderTerms; received: bigint }
  | { kind: 'wrong_mint'; order: SolanaOrderTerms }
  | { kind: 'wrong_destination'; order: SolanaOrderTerms }
  /** several transfers into one account in one transaction with a fee: the split is unknowable */
  | { kind: 'ambiguous'; order: SolanaOrderTerms }
  | { kind: 'no_reference' };

export function transferKey(t: Pick<SolanaTransfer, 'signature' | 'instructionIndex'>): string {
  return `${t.signature}:${t.instructionIndex}`;
}

export function attribute(t: SolanaTransfer, orderOf: (reference: string) => SolanaOrderTerms | undefined): Attribution {
  let order: SolanaOrderTerms | undefined;
  for (const r of t.references) if ((order = orderOf(r))) break;
  if (!order) return { kind: 'no_reference' };
  if (t.mint !== order.mint) return { kind: 'wrong_mint', order };
  if (t.destination !== order.payTo) return { kind: 'wrong_destination', order };
  if (t.received === undefined) return { kind: 'ambiguous', order };
  if (t.received < order.amount) return { kind: 'underpaid', order, received: t.received };
  return { kind: 'paid', order, received: t.received, overpaid: t.received > order.amount };
}
