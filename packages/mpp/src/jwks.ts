// The gateway's receipt keys (`GET {gateway}/.well-known/jwks.json`), cached so a paid request costs
// no extra round trip. A receipt signed by a key the cache does not know (a rotation) refreshes the
// set at most once per `refreshFloorMs`: a stream of forged `kid`s cannot turn into a stream of fetches.
import { verifyMppReceipt, type MppReceiptJwk, type MppReceiptVerification } from '@tollgate/sdk';

export interface JwksCacheOptions {
  ttlMs: number;
  refreshFloorMs: number;
  fetch: typeof fetch;
  now: () => number;
}

export class JwksCache {
  private keys: { keys: MppReceiptJwk[] } | undefined;
  private fetchedAt = -Infinity;
  private inflight: Promise<{ keys: MppReceiptJwk[] }> | undefined;

  constructor(private readonly url: string, private readonly o: JwksCacheOptions) {}

  /** Verifies a receipt JWS against the cached set, refreshing it when stale or when the `kid` is unknown. */
  async verify(jws: string): Promise<MppReceiptVerification> {
    const fresh = this.keys && this.o.now() - this.fetchedAt < this.o.ttlMs;
    const first = verifyMppReceipt(jws, fresh ? this.keys! : await this.load());
    if (first.ok || first.reason !== 'unknown_kid' || this.o.now() - this.fetchedAt < this.o.refreshFloorMs) return first;
    return verifyMppReceipt(jws, await this.load());
  }

  private load(): Promise<{ keys: MppReceiptJwk[] }> {
    // Concurrent requests share one fetch.
    this.inflight ??= (async () => {
      try {
        const r = await this.o.fetch(this.url, { headers: { accept: 'application/json' } });
        if (r.status !== 200) throw new Error(`JWKS: HTTP ${r.status}`);
        const body = (await r.json()) as { keys?: unknown };
        if (!Array.isArray(body.keys)) throw new Error('JWKS: no keys array');
        this.keys = { keys: body.keys as MppReceiptJwk[] };
        this.fetchedAt = this.o.now();
        return this.keys;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}
