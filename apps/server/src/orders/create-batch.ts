import { isPgError, pgConstraint, CHECK_VIOLATION, isStatementError, type Database } from '../db/database.ts';
import { KeyedBatcher } from '../db/batcher.ts';
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
 * Batches of one merchant in flight at once: while one holds the fee row and commits, the next
 * already inserts its orders (bench/orders-api.ts: 1 → 2 gained ~5 %, 3 no more within noise).
 */
const MAX_IN_FLIGHT = 2;

/**
 * Order creation with group commit: the concurrent creates of one merchant go into one statement
 * (orders/repo.ts `insertOrdersReservingFee`), so that merchant's fee-balance row is locked and
 * committed once per batch instead of once per order. Each order gets exactly the answer it would
 * get alone:
 *
 * - duplicates are skipped inside the statement and attributed here (an earlier order of the same
 *   batch, or a committed row, holds the `dapp_order_id`; otherwise the live terms clash);
 * - when the batch's fees exceed the balance — or the batch fails for any other statement-level
 *   reason — each order is retried alone, in submission order, so the balance goes to the first
 *   orders that fit and only the others are refused.
 *
 * A connection failure or timeout fails the whole batch (every request answers 503), as it would
 * have failed each request alone.
 */
export class OrderCreator {
  private readonly batcher: KeyedBatcher<repo.OrderToCreate, CreateResult>;

  constructor(private readonly db: Database) {
    this.batcher = new KeyedBatcher((merchantId, items) => this.createBatch(merchantId, items), { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT });
  }

  create(merchantId: string, order: repo.OrderToCreate): Promise<CreateResult> {
    return this.batcher.submit(merchantId, order);
  }

  private async createBatch(merchantId: string, all: repo.OrderToCreate[]): Promise<CreateResult[]> {
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
    const results = items.length > 0 ? await this.createDistinct(merchantId, items) : [];
    let k = 0;
    return all.map((_, i) => (isReplay[i] ? { kind: 'replay' } : results[k++]!));
  }

  private async createDistinct(merchantId: string, items: repo.OrderToCreate[]): Promise<CreateResult[]> {
    let rows: repo.CreateRowOutcome[];
    try {
      rows = await repo.insertOrdersReservingFee(this.db, merchantId, items);
    } catch (err) {
      if (!isStatementError(err)) throw err;
      if (items.length > 1) {
        const out: CreateResult[] = [];
        for (const it of items) out.push(await this.createOne(merchantId, it));
        return out;
      }
      if (isFeeShort(err)) return [{ kind: 'insufficient_fee', nonceSettled: false }];
      throw err;
    }
    return this.attribute(merchantId, items, rows);
  }

  private async createOne(merchantId: string, item: repo.OrderToCreate): Promise<CreateResult> {
    try {
      return (await this.attribute(merchantId, [item], await repo.insertOrdersReservingFee(this.db, merchantId, [item])))[0]!;
    } catch (err) {
      if (isFeeShort(err)) return { kind: 'insufficient_fee', nonceSettled: false };
      throw err;
    }
  }

  /** Maps statement rows to results, telling a duplicate `dapp_order_id` from a live-terms clash. */
  private async attribute(merchantId: string, items: repo.OrderToCreate[], rows: repo.CreateRowOutcome[]): Promise<CreateResult[]> {
    const createdDapp = new Set<string>();
    for (const r of rows) if ('order' in r) createdDapp.add(r.order.dapp_order_id);
    const conflicted = items.filter((it, i) => 'missing' in rows[i]! && rows[i]!.missing === 'conflict' && !createdDapp.has(it.dappOrderId));
    const existing = conflicted.length > 0 ? await repo.existingDappOrderIds(this.db, merchantId, conflicted.map((it) => it.dappOrderId)) : new Set<string>();
    return rows.map((r, i): CreateResult => {
      if ('order' in r) return { kind: 'created', order: r.order };
      if (r.missing === 'nonce_used') return { kind: 'replay' };
      if (r.missing === 'key_revoked') return { kind: 'key_revoked' };
      if (r.missing === 'wallet') return { kind: 'missing_wallet' };
      if (r.missing === 'fee_account') return { kind: 'insufficient_fee', nonceSettled: true };
      const dapp = items[i]!.dappOrderId;
      return createdDapp.has(dapp) || existing.has(dapp) ? { kind: 'duplicate_dapp_order_id' } : { kind: 'live_terms_conflict' };
    });
  }
}

const isFeeShort = (err: unknown) => isPgError(err, CHECK_VIOLATION) && pgConstraint(err) === repo.FEE_AVAILABLE_CHECK;
