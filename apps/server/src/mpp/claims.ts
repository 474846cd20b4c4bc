import { KeyedBatcher, type BatchStats } from '../db/batcher.ts';
import { isPgError, UNIQUE_VIOLATION, type Database } from '../db/database.ts';
import { claimTransfer, claimTransfers, type ClaimInput, type ClaimOutcome } from './repo.ts';

/**
 * Group commit of the verify's claims. A first verify is one read and one claiming write; the
 * write's commit (a WAL flush) was where concurrent first verifies queued: sampled in
 * pg_stat_activity during bench/mpp-verify.ts, nearly every active backend was a claim waiting on
 * WALWrite or WALSync. Claims submitted while one is being written go together in the next
 * statement, so N concurrent first verifies cost one commit (db/batcher.ts, one batch in flight,
 * as for request nonces).
 *
 * The answers are those of claiming one by one (repo.claimTransfer): claimTransfers writes a batch
 * atomically or not at all. Two claims of one batch may not name the same challenge or the same
 * transfer (the statement could not tell which of them won), so such a claim waits and is written
 * alone after the batch, which decides it exactly as a sequential verify would. A batch that a
 * concurrent writer in another process made fail (unique_violation on a transfer claimed meanwhile)
 * is retried claim by claim.
 */
const CLAIM_BATCH_MAX = 128;

export class ClaimWriter {
  readonly #batcher: KeyedBatcher<ClaimInput, ClaimOutcome>;

  constructor(private readonly db: Database) {
    this.#batcher = new KeyedBatcher((_k, items) => this.#write(items), { maxBatch: CLAIM_BATCH_MAX });
  }

  claim(c: ClaimInput): Promise<ClaimOutcome> {
    return this.#batcher.submit('claims', c);
  }

  stats(): BatchStats {
    return this.#batcher.stats();
  }

  async #write(items: ClaimInput[]): Promise<ClaimOutcome[]> {
    if (items.length === 1) return [await claimTransfer(this.db, items[0]!)];
    const together: number[] = [];
    const after: number[] = [];
    const challenges = new Set<string>();
    const transfers = new Set<string>();
    items.forEach((c, i) => {
      const t = `${c.chainId}:${c.txHash}:${c.logIndex}`;
      if (challenges.has(c.id) || transfers.has(t)) return void after.push(i);
      challenges.add(c.id);
      transfers.add(t);
      together.push(i);
    });
    const out: ClaimOutcome[] = new Array(items.length);
    try {
      const r = await claimTransfers(this.db, together.map((i) => items[i]!));
      together.forEach((i, k) => (out[i] = r[k]!));
    } catch (err) {
      if (!isPgError(err, UNIQUE_VIOLATION)) throw err;
      after.unshift(...together);
    }
    for (const i of after) out[i] = await claimTransfer(this.db, items[i]!);
    return out;
  }
}
