import { createRequire } from 'node:module';

export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Called when a measured round's clock starts and stops (CPU accounting). */
export interface Clock {
  onStart?: () => void;
  onEnd?: () => void;
}

export interface LoadResult {
  requests: number;
  errors: number;
  statusCounts: Record<number, number>;
  rps: number;
  p50ms: number;
  p99ms: number;
}

/** The part of autocannon's programmatic API used here (it ships no types). */
interface AutocannonResult {
  errors: number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AutocannonInstance {
  on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): void;
}
type Autocannon = (opts: Record<string, unknown>, done: (err: Error | null, r: AutocannonResult) => void) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/**
 * A closed-loop load over `concurrency` keep-alive connections, driven by autocannon (raw sockets,
 * prebuilt request buffers: far less client CPU per request than node:http, which matters on a
 * two-core machine where client, server and database share the cores). `make(i)` builds request
 * i, so every request can carry its own nonce and signature; with `prebuild: n` the first n are
 * built (signed) before the clock starts, and later ones on demand. Bounded by time (or by
 * `requests`); loopback only.
 */
export async function runLoad(
  opts: Clock & {
    baseUrl: string;
    concurrency: number;
    durationMs: number;
    /** Stop after this many requests instead (a workload of single-use requests, e.g. first verifies). */
    requests?: number;
    prebuild?: number;
    make: (i: number) => LoadRequest;
    expectStatus: number;
  },
): Promise<LoadResult> {
  const url = new URL(opts.baseUrl);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error('benchmarks only target loopback');
  const built = Array.from({ length: opts.prebuild ?? 0 }, (_, k) => opts.make(k));
  let i = 0;
  // Latencies of every response: autocannon's own histogram keeps 2xx only, and 402 is the success here.
  const lat: number[] = [];
  opts.onStart?.();
  // The rate is over our own clock, first request to last response: autocannon notices the end of
  // an `amount` run only at its next one-second sample, and its duration rounds up to that.
  const t0 = performance.now();
  let last = t0;
  const r = await new Promise<AutocannonResult>((resolve, reject) => {
    const setupRequest = (req: Record<string, unknown>) => {
      const k = i++;
      const next = built[k] ?? opts.make(k);
      return {
        ...req,
        method: next.method,
        path: next.path,
        headers: { ...(next.body ? { 'content-type': 'application/json' } : {}), ...next.headers },
        body: next.body,
      };
    };
    const inst = autocannon({ url: url.origin, connections: opts.concurrency, duration: opts.durationMs / 1000, ...(opts.requests ? { amount: opts.requests } : {}), timeout: 10, requests: [{ setupRequest }] }, (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('response', (_client, _status, _bytes, ms) => {
      lat.push(ms);
      last = performance.now();
    });
  });
  opts.onEnd?.();
  const statusCounts: Record<number, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCounts[Number(code)] = Number(v.count);
  const requests = Object.values(statusCounts).reduce((a, b) => a + b, 0);
  const errors = requests - (statusCounts[opts.expectStatus] ?? 0) + r.errors;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  return { requests, errors, statusCounts, rps: requests / ((last - t0) / 1000), p50ms: q(0.5), p99ms: q(0.99) };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
