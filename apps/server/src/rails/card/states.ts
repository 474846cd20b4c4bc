/**
 * Pure rules of the card rail: the processor-side payment state, hold reasons, and the ordering
 * rule that makes notifications safe to receive twice or out of order. No I/O.
 *
 * Order statuses are not extended: a paid card order that must not be fulfilled yet stays in
 * PAYMENT_CONFIRMED with one or more hold reasons (docs/card-payments.md "Outcomes and held payments": a
 * card order may be parked there for conflict, duplicate payment, refund, dispute or balance handling). The reasons are data on
 * the order (`held_reasons`), so several can hold at once and each is released on its own.
 */

export const HOLD_REASONS = ['duplicate_payment', 'conflict', 'refund', 'dispute', 'balance'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

export function isHoldReason(s: unknown): s is HoldReason {
  return typeof s === 'string' && (HOLD_REASONS as readonly string[]).includes(s);
}

export const CARD_PAYMENT_STATES = ['pending', 'processing', 'declined', 'succeeded', 'refunded'] as const;
export type CardPaymentState = (typeof CARD_PAYMENT_STATES)[number];

/**
 * Rank of a payment state. A notification may only move the state to an equal or higher rank:
 * processing and declined share a rank (a declined payer retries, a retry may be declined again),
 * succeeded is above both, refunded (fully) above succeeded. A late `succeeded` after a refund is
 * therefore recorded and ignored: it cannot undo the refund.
 */
export function rankOf(s: CardPaymentState): number {
  switch (s) {
    case 'pending':
      return 0;
    case 'processing':
    case 'declined':
      return 1;
    case 'succeeded':
      return 2;
    case 'refunded':
      return 3;
    default: {
      const never: never = s;
      throw new Error(`unknown card payment state ${never as string}`);
    }
  }
}

/** Whether a notification may move the payment from `from` to `to`. */
export function mayMove(from: CardPaymentState, to: CardPaymentState): boolean {
  return rankOf(to) >= rankOf(from) && !(from === to && to === 'refunded');
}

export const DISPUTE_STATUSES = ['opened', 'won', 'lost'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** A dispute opens, then is won or lost (final). A late `opened` after the outcome is ignored. */
export function mayMoveDispute(from: DisputeStatus | null, to: DisputeStatus): boolean {
  if (from === null) return true;
  if (from === 'opened') return to !== 'opened';
  return false;
}

/** `held_reasons` with `r` added (sorted, unique). */
export function withHold(reasons: readonly string[] | null | undefined, r: HoldReason): HoldReason[] {
  return [...new Set([...(reasons ?? []).filter(isHoldReason), r])].sort();
}

/** `held_reasons` without `r`. */
export function withoutHold(reasons: readonly string[] | null | undefined, r: HoldReason): HoldReason[] {
  return (reasons ?? []).filter(isHoldReason).filter((x) => x !== r);
}

/**
 * Seconds a card payment needs at least before the session expires: a payer types a card, may
 * pass a 3-D Secure challenge, and the processor confirms. Under two minutes the payer would
 * likely be charged after the session expired, the case the 410 `session_expired` answer exists for.
 */
export const MIN_CARD_WINDOW_SECONDS = 120;
