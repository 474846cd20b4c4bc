import { newId } from '@tollgate/protocol';
import { KeyedBatcher, type BatchStats } from '../db/batcher.ts';
import { DEADLOCK_DETECTED, isPgError, UNIQUE_VIOLATION, type Database } from '../db/database.ts';
import { mintDeliveryIds } from '../webhooks/outbox.ts';
import { paymentView } from './events.ts';
import type { ReceiptClaims } from './receipts.ts';
import { claimTransfers, type ClaimInput, type ClaimOutcome } from './repo.ts';

/** A claim with the claims its receipt signs (the event carries them; no decoding of the JWS). */
export type ClaimRequest = ClaimInput & { claims: ReceiptClaims };

/**
 * The verify's claims, and the `mpp.payment.confirmed` event of each payment they make.
 *
 * Group commit: a first verify is one read and one claiming write, and the write's commit (a WAL
 * flush) was where concurrent first verifies queued — sampled in pg_stat_activity during
 * bench/mpp-verify.ts, nearly every active backend was a claim waiting on WALWrite or WALSync.
 * Claims submitted while one batch is being written go together in the next (db/batcher.ts, one
 * batch in flight, as for request nonces): N concurrent first verifies cost one transaction.
 *
 * The event is written by the claim's own statement (outbox CTEs, webhooks/outbox.ts): it exists
 * exactly when the payment does, once, and is delivered as soon as the claim commits. One statement
 * per batch and no explicit transaction: BEGIN, a read of the endpoints, two inserts and COMMIT
 * were five more round trips per batch. (A worker announcing paid challenges afterwards cost a
 * second write of every challenge row and a scan per tick: on two shared cores, more than the
 * verify it followed.)
 *
 * A batch answers each claim as claiming them one at a time would. Two claims of one statement may
 * not name the same challenge or the same transfer (it could not tell which won), so such a claim
 * goes in a later round of the same batch, which decides it as a later verify would. A round that a
 * concurrent writer in another process made fail is run again: unique_violation (the same transfer
 * claimed and committed meanwhile; the other claim is then seen as taken) or deadlock_detected.
 * The deadlock: two writers' statements claim overlapping challenges and transfers, each holds a
 * challenge row or a claim key the other needs (writer A pays c2 with t2 while B pays c1 with t2 and
 * then c2), and no order of the rows avoids it, because one transfer can be offered for different
 * challenges. Postgres aborts one statement after deadlock_timeout (1 s); it wrote nothing, and
 * its second run sees the other's claims committed. Seen in CI with two pools racing.
 */
const CLAIM_BATCH_MAX = 128;
const ROUND_ATTEMPTS = 3;

export class ClaimWriter {
  readonly #batcher: KeyedBatcher<ClaimRequest, ClaimOutcome>;
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    this.#batcher = new KeyedBatcher((_k, items) => this.#write(items), { maxBatch: CLAIM_BATCH_MAX });
  }

  claim(c: ClaimRequest): Promise<ClaimOutcome> {
    return this.#batcher.submit('claims', c);
  }

  stats(): BatchStats {
    return this.#batcher.stats();
  }

  async #write(items: ClaimRequest[]): Promise<ClaimOutcome[]> {
    const out: ClaimOutcome[] = new Array(items.length);
    for (let left = items.map((_, i) => i); left.length > 0; ) {
      const round: number[] = [];
      const later: number[] = [];
      const challenges = new Set<string>();
      const transfers = new Set<string>();
      for (const i of left) {
        const c = items[i]!;
        const t = `${c.chainId}:${c.txHash}:${c.logIndex}`;
        if (challenges.has(c.id) || transfers.has(t)) later.push(i);
        else {
          challenges.add(c.id);
          transfers.add(t);
          round.push(i);
        }
      }
      const r = await this.#round(round.map((i) => items[i]!));
      round.forEach((i, k) => (out[i] = r[k]!));
      left = later;
    }
    return out;
  }

  /** One statement of distinct claims and the events of those it pays (mpp/repo.ts). */
  async #round(claims: ClaimRequest[]): Promise<ClaimOutcome[]> {
    const items = claims.map((c) => ({ ...c, event: { id: newId('evt'), payload: JSON.stringify(paymentView({ id: c.id, receipt_jws: c.receiptJws, paid_at: c.paidAt }, c.claims)) } }));
    const deliveryIds = mintDeliveryIds(items.length);
    for (let attempt = 1; ; attempt++) {
      try {
        return await claimTransfers(this.db, items, deliveryIds);
      } catch (err) {
        if (attempt >= ROUND_ATTEMPTS || !(isPgError(err, UNIQUE_VIOLATION) || isPgError(err, DEADLOCK_DETECTED))) throw err;
      }
    }
  }
}
