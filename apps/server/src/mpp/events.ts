import { decodeClaims, type ReceiptClaims } from './receipts.ts';

/**
 * A paid machine payment as the merchant sees it: one item of `GET /api/v1/mpp/payments` and the
 * payload of `mpp.payment.confirmed`, built by one function so the two cannot drift apart. The
 * claims are the signed receipt's, spread beside it for readers that do not decode JWS.
 *
 * The event is written by the claim that pays the challenge, in the same transaction
 * (mpp/claims.ts): it exists exactly when the payment does, once.
 */
export type MppPaymentView = { status: 'paid'; receipt: string } & ReceiptClaims & { paid_at: string };

/** The columns the view reads; a PAID row has both (CHECK mpp_challenges_paid_complete). */
export interface PaidRow {
  id: string;
  receipt_jws: string | null;
  paid_at: Date | null;
}

/** `claims`: the receipt's, when the caller has them (the verify just signed them): no decoding. */
export function paymentView(r: PaidRow, claims?: ReceiptClaims): MppPaymentView {
  // Reaching here with an unpaid row is a caller bug, not a state to paper over with empty fields.
  if (r.receipt_jws === null || r.paid_at === null) throw new Error(`challenge ${r.id} is not paid`);
  return { status: 'paid', receipt: r.receipt_jws, ...(claims ?? decodeClaims(r.receipt_jws)), paid_at: r.paid_at.toISOString() };
}
