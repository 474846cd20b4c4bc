import type { Clock } from '../clock.ts';
import type { Database } from '../db/database.ts';
import { emitEvents } from '../webhooks/outbox.ts';
import type { ReceiptClaims } from './receipts.ts';
import { decodeClaims } from './verify.ts';

/**
 * A paid machine payment as the merchant sees it: one item of `GET /api/v1/mpp/payments` and the
 * payload of `mpp.payment.confirmed`, built by one function so the two cannot drift apart. The
 * claims are the signed receipt's, spread beside it for readers that do not decode JWS.
 */
export type MppPaymentView = { status: 'paid'; receipt: string } & ReceiptClaims & { paid_at: string };

/** The columns the view reads; a PAID row has both (CHECK mpp_challenges_paid_complete). */
export interface PaidRow {
  id: string;
  receipt_jws: string | null;
  paid_at: Date | null;
}

export function paymentView(r: PaidRow): MppPaymentView {
  // Reaching here with an unpaid row is a caller bug, not a state to paper over with empty fields.
  if (r.receipt_jws === null || r.paid_at === null) throw new Error(`challenge ${r.id} is not paid`);
  return { status: 'paid', receipt: r.receipt_jws, ...decodeClaims(r.receipt_jws), paid_at: r.paid_at.toISOString() };
}

/**
 * Emits `mpp.payment.confirmed` to the challenge's merchant for paid challenges not announced yet,
 * oldest payment first, and marks them announced in the same transaction (the webhook outbox: the
 * event exists exactly when the mark does, so each paid challenge is announced once). Rows are
 * taken with SKIP LOCKED, so workers in several processes share the work without announcing one
 * twice or waiting on each other.
 *
 * Runs from the worker, not from the verify that pays: that claim is one statement on the hot
 * path, and the receipt it returns is already the authoritative signal; the event follows within
 * a worker tick. The lock cannot hold a verify up: a verify only writes OPEN rows, these are PAID.
 * Returns how many payments were announced (`batch` means there may be more).
 */
export async function emitPaymentEvents(db: Database, clock: Clock, batch = 100): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<PaidRow & { merchant_id: string }>(
      `SELECT id, merchant_id, receipt_jws, paid_at FROM mpp_challenges
       WHERE status = 'PAID' AND notified_at IS NULL
       ORDER BY paid_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [batch],
    );
    if (rows.length === 0) return 0;
    const now = new Date(clock.now());
    // Set-based (three statements for the batch): a busy API emits hundreds of these a second.
    await emitEvents(tx, rows.map((r) => ({ merchantId: r.merchant_id, event: 'mpp.payment.confirmed' as const, payload: paymentView(r), clockNow: now })));
    await tx.query('UPDATE mpp_challenges SET notified_at = $2 WHERE id = ANY ($1::text[])', [rows.map((r) => r.id), now]);
    return rows.length;
  });
}
