import { isPgError, pgConstraint, CHECK_VIOLATION, isStatementError, type Database } from '../db/database.ts';
import { KeyedBatcher, type BatchStats } from '../db/batcher.ts';
import * as repo from './repo.ts';

/** What creating one order came to. */
export type CreateResult =
  | { kind: 'created'; order: repo.CreatedOrder }
  | { kind: 'replay' }
  | { kind: 'key_revoked' }
  | { kind: 'missing_wallet' }
  /** `nonceSettled` false: the statement was refused whole, so the request's nonce is still unused. */
  | { kind: 'insufficient_fee'; nonceSettled: boolean }
  | { kind: 'duplicate_dapp_order_id' }
  | { kind: 'live_terms_conflict' };

/** Most orders per statement: bounds the statement and what one slow batch delays. */
const MAX_BATCH = 128;
/**
 * One batch in flight per process. A second one overlapped little (both need the fee rows, which
 * the first holds until its commit) and halved the batches: about 500 µs of each statement's
 * Postgres time is fixed (executor start, commit), so at 32 concurrent clients batches of ~10
 * instead of ~16 cost 172 instead of 109 µs of Postgres CPU per order, and 15 % fewer orders/s
 * (bench/ab.ts, interleaved). Several API processes still write in parallel.
 */
const MAX_IN_FLIGHT = 1;

/**
 * Order creation with group commit: concurrent creates — of any merchants — go into one statement
 * (orders/repo.ts `insertOrdersReservingFee`), so fee-balance rows are locked and committed once
 * per batch instead of once per order. Each order gets exactly the answer it would get alone:
 *
 * - duplicates are skipped inside the statement and attributed here (an earlier order of the same
 *   batch, or a committed row, holds the `dapp_order_id`; otherwise the live terms clash);
 * - the orders of a merchant whose balance does not cover all of them are retried alone, in
 *   submission order, so the balance goes to the first orders that fit and only the others are
 *   refused; a batch that fails for any statement-level reason (a balance spent concurrently, a
 *   deadlock) is retried per merchant, then order by order.
 *
 * A connection failure or timeout fails the whole batch (every request answers 503), as it would
 * have failed each request alone.
 */
export class OrderCreator {
  private readonly batcher: KeyedBatcher<repo.OrderToCreate, CreateResult>;
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    this.batcher = new KeyedBatcher((_key, items) => this.createBatch(items), { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT });
  }

  create(order: repo.OrderToCreate): Promise<CreateResult> {
    return this.batcher.submit('orders', order);
  }

  stats(): BatchStats {
    return this.batcher.stats();
  }

  private async createBatch(all: repo.OrderToCreate[]): Promise<CreateResult[]> {
    // The same signed request twice in one batch (same key and nonce): the first is the request,
    // the others its replays — the statement needs distinct pairs.
    const seen = new Set<string>();
    const isReplay = all.map((it) => {
      if (!it.nonce) return false;
      const id = `${it.nonce.apiKey}\n${it.nonce.nonce}`;
      if (seen.has(id)) return true;
      seen.add(id);
      return false;
    });
    const items = all.filter((_, i) => !isReplay[i]);
    const results = items.length > 0 ? await this.createDistinct(items) : [];
    let k = 0;
    return all.map((_, i) => (isReplay[i] ? { kind: 'replay' } : results[k++]!));
  }

  private async createDistinct(items: repo.OrderToCreate[]): Promise<CreateResult[]> {
    if (items.length === 1) return [await this.createOne(items[0]!, false)];
    let rows: repo.CreateRowOutcome[];
    try {
      rows = await repo.insertOrdersReservingFee(this.db, items);
    } catch (err) {
      if (!isStatementError(err)) throw err;
      return this.retryApart(items);
    }
    const results = await this.attribute(items, rows);
    // A merchant short for the whole batch: its orders alone, in order (their nonces are used).
    for (let i = 0; i < items.length; i++) {
      if (missing(rows[i]!) === 'fee_short') results[i] = await this.createOne({ ...items[i]!, nonce: undefined }, true);
    }
    return results;
  }

  /** After a statement-level failure: each merchant's orders as their own batch, or one by one. */
  private async retryApart(items: repo.OrderToCreate[]): Promise<CreateResult[]> {
    const groups = new Map<string, number[]>();
    items.forEach((it, i) => {
      const g = groups.get(it.merchantId);
      if (g) g.push(i);
      else groups.set(it.merchantId, [i]);
    });
    const out: CreateResult[] = new Array(items.length);
    for (const idx of groups.values()) {
      const group = idx.map((i) => items[i]!);
      const res: CreateResult[] = [];
      if (groups.size > 1) res.push(...(await this.createDistinct(group)));
      else for (const it of group) res.push(await this.createOne(it, false));
      idx.forEach((i, k) => (out[i] = res[k]!));
    }
    return out;
  }

  /** One order alone. `nonceUsed`: its nonce was already consumed by an earlier statement. */
  private async createOne(item: repo.OrderToCreate, nonceUsed: boolean): Promise<CreateResult> {
    try {
      const rows = await repo.insertOrdersReservingFee(this.db, [item]);
      if (missing(rows[0]!) === 'fee_short') return { kind: 'insufficient_fee', nonceSettled: true };
      return (await this.attribute([item], rows))[0]!;
    } catch (err) {
      if (isFeeShort(err)) return { kind: 'insufficient_fee', nonceSettled: nonceUsed };
      throw err;
    }
  }

  /** Maps statement rows to results, telling a duplicate `dapp_order_id` from a live-terms clash. */
  private async attribute(items: repo.OrderToCreate[], rows: repo.CreateRowOutcome[]): Promise<CreateResult[]> {
    const key = (merchantId: string, dapp: string) => `${merchantId}\n${dapp}`;
    const created = new Set<string>();
    for (const r of rows) if ('order' in r) created.add(key(r.order.merchant_id, r.order.dapp_order_id));
    const conflicted = items.filter((it, i) => missing(rows[i]!) === 'conflict' && !created.has(key(it.merchantId, it.dappOrderId)));
    const existing = conflicted.length > 0 ? await repo.existingDappOrderIds(this.db, conflicted) : new Set<string>();
    return rows.map((r, i): CreateResult => {
      if ('order' in r) return { kind: 'created', order: r.order };
      if (r.missing === 'nonce_used') return { kind: 'replay' };
      if (r.missing === 'key_revoked') return { kind: 'key_revoked' };
      if (r.missing === 'wallet') return { kind: 'missing_wallet' };
      if (r.missing === 'fee_account' || r.missing === 'fee_short') return { kind: 'insufficient_fee', nonceSettled: true };
      const k = key(items[i]!.merchantId, items[i]!.dappOrderId);
      return created.has(k) || existing.has(k) ? { kind: 'duplicate_dapp_order_id' } : { kind: 'live_terms_conflict' };
    });
  }
}

const isFeeShort = (err: unknown) => isPgError(err, CHECK_VIOLATION) && pgConstraint(err) === repo.FEE_AVAILABLE_CHECK;
const missing = (r: repo.CreateRowOutcome) => ('missing' in r ? r.missing : undefined);
