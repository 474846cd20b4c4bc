import http from 'node:http';

export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  errors: number;
  statusCounts: Record<number, number>;
  rps: number;
  p50ms: number;
  p99ms: number;
}

/**
 * A closed-loop load generator over keep-alive node:http (lower client overhead than fetch, which
 * matters on a 2-core machine where client and server share the CPU). `make(i)` builds request i,
 * so every request can carry a fresh nonce and signature. With `prebuild: n` the first n requests
 * are built (signed) before the clock starts, like autocannon's fixed requests, so the client's
 * signing does not compete with the server for the two cores; the run then ends after n requests
 * at most. Bounded by count and time; loopback only.
 */
export async function runLoad(opts: { baseUrl: string; concurrency: number; durationMs: number; maxRequests?: number; prebuild?: number; make: (i: number) => LoadRequest; expectStatus: number }): Promise<LoadResult> {
  const url = new URL(opts.baseUrl);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error('benchmarks only target loopback');
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const lat: number[] = [];
  const statusCounts: Record<number, number> = {};
  let i = 0;
  let errors = 0;
  const built = Array.from({ length: opts.prebuild ?? 0 }, (_, k) => opts.make(k));
  const make = built.length > 0 ? (k: number) => built[k]! : opts.make;
  const deadline = Date.now() + opts.durationMs;
  const max = Math.min(opts.maxRequests ?? Number.POSITIVE_INFINITY, built.length || Number.POSITIVE_INFINITY);
  const one = (req: LoadRequest) =>
    new Promise<number>((resolve) => {
      const r = http.request(
        { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, method: req.method, path: req.path, agent, headers: { ...(req.body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body) } : {}), ...req.headers } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      r.on('error', () => resolve(0));
      if (req.body) r.write(req.body);
      r.end();
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (Date.now() < deadline && i < max) {
        const req = make(i++);
        const t0 = process.hrtime.bigint();
        const status = await one(req);
        lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
        statusCounts[status] = (statusCounts[status] ?? 0) + 1;
        if (status !== opts.expectStatus) errors++;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  return { requests: lat.length, errors, statusCounts, rps: lat.length / elapsed, p50ms: q(0.5), p99ms: q(0.99) };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
