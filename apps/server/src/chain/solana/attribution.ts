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

/** What a transfer attributed to an order records: the kinds of the EVM rule (docs/attribution.md). */
export type RecordedKind = 'matched' | 'underpaid' | 'late' | 'duplicate';

/**
 * The record of a transfer `attribute` tied to `o` (`paid` or `underpaid`), as the EVM rule decides
 * it (chain/evm/matching.ts decideMatch), so a Solana payment is never worth more than an EVM one:
 *  - enough, to a live unpaid order whose `expires_at` is not before the transaction's block time
 *    → `matched` (it pays the order);
 *  - enough, to a live unpaid order that had expired at the block's time (mined after the expiry,
 *    before the expiry sweeper ran), or to a closed order (EXPIRED, CANCELLED, FAILED) → `late`;
 *  - enough, to an order already paid → `duplicate`;
 *  - short, to a closed order → `late`; else `underpaid` (the EVM rule 4, live even after expiry).
 * A block time the node does not report (null) counts as on time: the expiry sweeper waits for a
 * full watcher pass after the expiry, so a transfer read before that was at most that late.
 */
export function recordedKind(kind: 'paid' | 'underpaid', o: { status: string; transfer_id: number | string | null; expires_at: Date }, blockTime: bigint | null): RecordedKind {
  const open = o.status === 'CHECKOUT_VERIFIED' && o.transfer_id === null;
  const closed = o.status === 'EXPIRED' || o.status === 'CANCELLED' || o.status === 'FAILED';
  if (kind === 'underpaid') return closed ? 'late' : 'underpaid';
  if (open) return blockTime !== null && Number(blockTime) * 1000 > o.expires_at.getTime() ? 'late' : 'matched';
  return closed ? 'late' : 'duplicate';
}
