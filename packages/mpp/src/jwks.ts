// The gateway's receipt keys (`GET {gateway}/.well-known/jwks.json`), cached so a paid request costs
// no extra round trip. The gateway publishes a key before signing with it, so a receipt whose `kid`
// the cache does not know (a rotation) triggers one fresh fetch; a `kid` still missing after that
// fetch is remembered as unknown for `unknownKidMs`, so repeating it does not refetch every time.
import { verifyMppReceipt, type MppReceiptJwk, type MppReceiptVerification } from '@tollgate/sdk';

export interface JwksCacheOptions {
  ttlMs: number;
  unknownKidMs: number;
  fetch: typeof fetch;
  now: () => number;
}

type Jwks = { keys: MppReceiptJwk[] };

export class JwksCache {
  private keys: Jwks | undefined;
  private fetchedAt = -Infinity;
  private inflight: Promise<Jwks> | undefined;
  private generation = 0;
  private readonly unknown = new Map<string, number>();
  private readonly url: string;
  private readonly o: JwksCacheOptions;

  constructor(url: string, o: JwksCacheOptions) {
    this.url = url;
    this.o = o;
  }

  /** Verifies a receipt JWS against the cached set, refreshing it when stale or when the `kid` is new. */
  async verify(jws: string): Promise<MppReceiptVerification> {
    const fresh = this.keys && this.o.now() - this.fetchedAt < this.o.ttlMs;
    const first = verifyMppReceipt(jws, fresh ? this.keys! : await this.load(false));
    if (first.ok || first.reason !== 'unknown_kid') return first;
    const kid = kidOf(jws);
    const seen = this.unknown.get(kid);
    if (seen !== undefined && this.o.now() - seen < this.o.unknownKidMs) return first;
    // A fetch already under way may have started before the key was published: fetch anew.
    const again = verifyMppReceipt(jws, await this.load(true));
    if (!again.ok && again.reason === 'unknown_kid') {
      if (this.unknown.size >= 1000) this.unknown.clear();
      this.unknown.set(kid, this.o.now());
    }
    return again;
  }

  private load(force: boolean): Promise<Jwks> {
    if (this.inflight && !force) return this.inflight;
    const gen = ++this.generation;
    const p = (async () => {
      try {
        const r = await this.o.fetch(this.url, { headers: { accept: 'application/json' } });
        if (r.status !== 200) throw new Error(`JWKS: HTTP ${r.status}`);
        const body = (await r.json()) as { keys?: unknown };
        if (!Array.isArray(body.keys)) throw new Error('JWKS: no keys array');
        this.keys = { keys: body.keys as MppReceiptJwk[] };
        this.fetchedAt = this.o.now();
        return this.keys;
      } finally {
        // Only the latest fetch clears the slot (a forced fetch may have replaced an older one).
        if (this.generation === gen) this.inflight = undefined;
      }
    })();
    this.inflight = p;
    return p;
  }
}

function kidOf(jws: string): string {
  try {
    return String(JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')).kid);
  } catch {
    return '';
  }
}
