import { KeyedBatcher, type BatchStats } from '../db/batcher.ts';
import type { Database } from '../db/database.ts';
import { getChallengesWithIndexed, type ChallengeWithIndexed } from './repo.ts';

/**
 * The verify's read — a challenge with the watcher's records of the transaction presented for it —
 * coalesced: reads submitted while one statement is in flight go together in the next
 * (db/batcher.ts; an idle gateway reads at once, there is no timer).
 *
 * Why: on these machines a query's round trip, not its rows, is most of what it costs the API
 * process. Profiles of bench/mpp-verify.ts put 35–50 % of its CPU in the `writev` that sends each
 * query (a write to a loopback socket also pays for waking the Postgres backend). A first verify
 * was one read plus a share of one claim batch, a repeat verify one read: coalescing the reads
 * leaves a busy gateway a fraction of a round trip per verify.
 *
 * Each read is a plain read of committed rows; reading several challenges in one statement answers
 * each as its own statement would at that moment. Deciding and claiming stay per verify
 * (mpp/verify.ts, mpp/claims.ts).
 */
const READ_BATCH_MAX = 128;

export class ChallengeReader {
  readonly #batcher: KeyedBatcher<{ id: string; txHash: string }, ChallengeWithIndexed | undefined>;

  constructor(db: Database) {
    this.#batcher = new KeyedBatcher((_k, reqs) => getChallengesWithIndexed(db, reqs), { maxBatch: READ_BATCH_MAX });
  }

  /** The challenge `id` (undefined if unknown) with the index's records of `txHash` (lower-case). */
  read(id: string, txHash: string): Promise<ChallengeWithIndexed | undefined> {
    return this.#batcher.submit('reads', { id, txHash });
  }

  stats(): BatchStats {
    return this.#batcher.stats();
  }
}
