import { isStatementError, type Database } from '../db/database.ts';
import { KeyedBatcher, type BatchStats } from '../db/batcher.ts';
import type { NonceClaim } from '../merchants/credentials.ts';
import { consumeNoncesReadingOrders } from './status-repo.ts';
import type { OrderWithTransfers } from './transfers-repo.ts';

/** One signed status read: the order asked for and the request's nonce, still unsettled. */
export interface StatusRead {
  merchantId: string;
  orderId: string;
  nonce: NonceClaim;
}

export type StatusReadResult =
  | { kind: 'found'; order: OrderWithTransfers }
  | { kind: 'not_found' }
  /** The nonce was used before (this process, another one, or earlier in the same batch). */
  | { kind: 'replay' }
  | { kind: 'key_revoked' };

/** Most reads per statement (as the nonce batcher: bounds the statement and the last item's wait). */
const MAX_BATCH = 256;
/**
 * One batch in flight, as the nonce batcher (merchants/credentials.ts): each statement's fixed
 * cost (executor start, commit) is shared by more reads when the next batch waits for this one.
 */
const MAX_IN_FLIGHT = 1;

/**
 * getOrderStatus with group commit. A signed GET must use up its nonce before it is answered (the
 * replay protection of docs/authentication.md); this used to be two statements per read, the
 * nonce batcher's INSERT and then the order's SELECT. Here the nonces and the orders of concurrent
 * reads go in one statement (orders/repo.ts `consumeNoncesReadingOrders`): one round trip and one
 * commit per batch, same answers as before:
 *
 * - an order is read only for a request whose nonce this statement recorded; a nonce already in
 *   `request_nonces` (any process, committed or committing: the unique index waits for it) is a
 *   replay, and so is the second use of one nonce inside a batch;
 * - the nonce is durable before the answer leaves: the statement has committed when pg resolves;
 * - a key revoked through any process refuses the read (the statement checks `revoked_at`).
 *
 * A statement error (not a connection failure) retries the batch read by read, so one bad item
 * cannot fail the others; a connection failure or timeout fails the batch (503 each), and the
 * nonces are then recorded exactly when the statement committed.
 */
export class StatusReader {
  private readonly batcher: KeyedBatcher<StatusRead, StatusReadResult>;
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    this.batcher = new KeyedBatcher((_key, items) => this.readBatch(items), { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT });
  }

  /** Consumes the read's nonce (marks its claim settled) and reads the order if it was fresh. */
  async read(item: StatusRead): Promise<StatusReadResult> {
    const out = await this.batcher.submit('status', item);
    item.nonce.settled = true;
    return out;
  }

  stats(): BatchStats {
    return this.batcher.stats();
  }

  private async readBatch(all: StatusRead[]): Promise<StatusReadResult[]> {
    // The same key and nonce twice in one batch: the first is the request, the others its replays.
    const seen = new Set<string>();
    const isReplay = all.map((it) => {
      const id = `${it.nonce.apiKey}\n${it.nonce.nonce}`;
      if (seen.has(id)) return true;
      seen.add(id);
      return false;
    });
    const items = all.filter((_, i) => !isReplay[i]);
    let results: StatusReadResult[];
    try {
      results = await this.readDistinct(items);
    } catch (err) {
      if (!isStatementError(err) || items.length === 1) throw err;
      results = [];
      for (const it of items) results.push(...(await this.readDistinct([it])));
    }
    let k = 0;
    return all.map((_, i) => (isReplay[i] ? { kind: 'replay' } : results[k++]!));
  }

  private async readDistinct(items: StatusRead[]): Promise<StatusReadResult[]> {
    if (items.length === 0) return [];
    const rows = await consumeNoncesReadingOrders(
      this.db,
      items.map((it) => ({ apiKey: it.nonce.apiKey, nonce: it.nonce.nonce, merchantId: it.merchantId, orderId: it.orderId })),
    );
    return rows.map((r): StatusReadResult => {
      if (r.outcome !== 'consumed') return { kind: r.outcome };
      return r.order ? { kind: 'found', order: r.order } : { kind: 'not_found' };
    });
  }
}
