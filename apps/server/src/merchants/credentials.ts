import type { Database } from '../db/database.ts';
import { isStatementError } from '../db/database.ts';
import { KeyedBatcher, type BatchStats } from '../db/batcher.ts';
import * as repo from './repo.ts';
import { decryptSecret } from './secrets.ts';

export interface ApiKeyEntry {
  merchantId: string;
  receiveType: 'DIRECT' | 'DELEGATE';
  secret: string;
  /** As read when cached; a later revocation is caught by `consumeNonce`, not here. */
  revoked: boolean;
}

export type NonceOutcome = 'consumed' | 'replay' | 'revoked';

/**
 * A verified request's nonce that its route consumes inside its own write (order creation records
 * it in the statement that creates the order: one commit instead of two). `settled` turns true
 * once the nonce was consumed or refused; http/route.ts consumes any claim still unsettled before
 * the response leaves, so every authenticated request uses up its nonce whatever its outcome.
 */
export interface NonceClaim {
  readonly apiKey: string;
  readonly nonce: string;
  settled: boolean;
}

/** How long a looked-up key stays cached, and how many keys at most (oldest dropped first). */
const KEY_TTL_MS = 5 * 60_000;
const KEY_CACHE_MAX = 10_000;
const NONCE_BATCH_MAX = 256;
/**
 * Nonce batches in flight at once. They touch distinct rows and could overlap, but each statement
 * has a fixed cost (executor start, commit) that bigger batches share: with one in flight,
 * getOrderStatus served 10–16 % more requests with less CPU per request in both processes than
 * with four (bench/orders-api.ts, two alternating pairs of runs).
 */
const NONCE_IN_FLIGHT = 1;

/**
 * The two database touches of every signed request, made cheap without weakening them:
 *
 * - `findApiKey` caches the key's merchant, receive type and decrypted secret for a few minutes.
 *   All three are immutable for a key's lifetime; only revocation changes, and it is not trusted
 *   from the cache: `consumeNonce` re-checks it in the statement that records the nonce, so a key
 *   revoked through any process stops working at the next request. Unknown keys are not cached,
 *   so random keys cannot fill memory.
 * - `consumeNonce` group-commits: the nonces of concurrent requests go in one INSERT and one
 *   commit (db/batcher.ts). A nonce is still consumed only after its signature verified, and a
 *   request is answered only once its nonce is durably recorded.
 */
export class CredentialStore {
  private readonly keys = new Map<string, { entry: ApiKeyEntry; at: number }>();
  private readonly nonces: KeyedBatcher<{ apiKey: string; nonce: string }, NonceOutcome>;
  private readonly db: Database;
  private readonly masterKey: Buffer;
  private readonly now: () => number;

  constructor(db: Database, masterKey: Buffer, now: () => number = Date.now) {
    this.db = db;
    this.masterKey = masterKey;
    this.now = now;
    this.nonces = new KeyedBatcher((_k, items) => this.consumeBatch(items), { maxBatch: NONCE_BATCH_MAX, maxInFlight: NONCE_IN_FLIGHT });
  }

  async findApiKey(apiKey: string): Promise<ApiKeyEntry | undefined> {
    const hit = this.keys.get(apiKey);
    if (hit && this.now() - hit.at < KEY_TTL_MS) return hit.entry;
    const row = await repo.findApiKey(this.db, apiKey);
    if (!row) return undefined;
    const entry: ApiKeyEntry = {
      merchantId: row.merchant_id,
      receiveType: row.receive_type,
      secret: decryptSecret(this.masterKey, row.secret_ciphertext, row.api_key),
      revoked: row.revoked_at !== null,
    };
    this.keys.delete(apiKey);
    if (this.keys.size >= KEY_CACHE_MAX) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(apiKey, { entry, at: this.now() });
    return entry;
  }

  /** Forgets a key at once in this process (after a revocation made here). */
  forget(apiKey: string): void {
    this.keys.delete(apiKey);
  }

  consumeNonce(apiKey: string, nonce: string): Promise<NonceOutcome> {
    return this.nonces.submit('nonces', { apiKey, nonce });
  }

  nonceBatchStats(): BatchStats {
    return this.nonces.stats();
  }

  private async consumeBatch(items: { apiKey: string; nonce: string }[]): Promise<NonceOutcome[]> {
    // The same pair twice in one batch: the first is the request, the second its replay.
    const seen = new Set<string>();
    const firsts: { apiKey: string; nonce: string }[] = [];
    const isFirst = items.map((it) => {
      const id = `${it.apiKey}\n${it.nonce}`;
      if (seen.has(id)) return false;
      seen.add(id);
      firsts.push(it);
      return true;
    });
    let recorded: Set<string>;
    try {
      recorded = new Set((await repo.insertNonces(this.db, firsts)).map((r) => `${r.api_key}\n${r.nonce}`));
    } catch (err) {
      // A statement error (should not happen: sorted rows cannot deadlock) must not fail the other
      // requests of the batch: record them one by one so only a bad item fails.
      if (!isStatementError(err) || firsts.length === 1) throw err;
      recorded = new Set();
      for (const it of firsts) {
        if ((await repo.insertNonces(this.db, [it])).length === 1) recorded.add(`${it.apiKey}\n${it.nonce}`);
      }
    }
    const missing = firsts.filter((it) => !recorded.has(`${it.apiKey}\n${it.nonce}`)).map((it) => it.apiKey);
    const revoked = missing.length > 0 ? await repo.revokedKeys(this.db, [...new Set(missing)]) : new Set<string>();
    return items.map((it, i) => {
      if (!isFirst[i]) return 'replay';
      if (recorded.has(`${it.apiKey}\n${it.nonce}`)) return 'consumed';
      return revoked.has(it.apiKey) ? 'revoked' : 'replay';
    });
  }
}
