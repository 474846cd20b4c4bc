/**
 * Scale-out: two `serve --role api` processes against one, on the same PostgreSQL database, with
 * the same total number of clients (half on each process: a load balancer's round robin).
 * createOrder (signed POST: a group-committed insert, a nonce, a fee reserve) and getOrderStatus
 * (signed GET: a nonce write and one read), ROUNDS rounds, one-process and two-process runs
 * interleaved in each round; medians reported, with the machine's load average around the run.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/scale-out.ts
 *
 * On a machine with fewer cores than client + gateways + PostgreSQL need, a second process adds
 * no CPU to share: expect a flat curve, and read the numbers as "no loss from a second process"
 * rather than as the gain on a larger machine (docs/operations.md, "Scaling out").
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus, loadavg } from 'node:os';
import pg from 'pg';
import { signedHeaders } from '@tollgate/protocol';
import { startGateway, type BenchMerchant } from './lib/gateway.ts';
import { median, runLoad, type LoadRequest, type LoadResult } from './lib/load.ts';
import { scratchDb } from './lib/db.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MERCHANTS = 8;

async function main() {
  const db = await scratchDb(BASE_DB);
  const masterKey = randomBytes(32).toString('hex');
  const env = { MASTER_KEY: masterKey };
  const a = await startGateway(db.url, { env });
  const b = await startGateway(db.url, { env });
  const load0 = loadavg();
  try {
    const merchants: BenchMerchant[] = [];
    for (let i = 0; i < MERCHANTS; i++) merchants.push(await a.merchant(`scale-${i}`));
    let seq = 0;
    const run = randomBytes(3).toString('hex');
    const orderReq = (c: BenchMerchant): LoadRequest => {
      const k = ++seq;
      const body = { dapp_order_id: `scale-${run}-${k}`, chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: String(1_000_000 + k) };
      return { method: 'POST', path: '/api/v1/orders', body: JSON.stringify(body), headers: signedHeaders({ apiKey: c.apiKey, apiSecret: c.apiSecret, body }) };
    };
    // Orders to read: made through process A, read through both.
    for (let k = 0; k < 400; k++) {
      const r = orderReq(merchants[k % MERCHANTS]!);
      const res = await fetch(a.url + r.path, { method: 'POST', headers: { 'content-type': 'application/json', ...r.headers }, body: r.body! });
      if (res.status !== 402) throw new Error(`seed order: ${res.status} ${await res.text()}`);
    }
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query<{ id: string; merchant_id: string }>('SELECT id, merchant_id FROM orders');
    await c.end();
    const byId = new Map(merchants.map((m) => [m.merchantId, m]));
    const statusReq = (i: number): LoadRequest => {
      const o = rows[i % rows.length]!;
      const m = byId.get(o.merchant_id)!;
      return { method: 'GET', path: `/api/v1/orders/${o.id}`, headers: signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret }) };
    };
    const createReq = (i: number) => orderReq(merchants[i % MERCHANTS]!);

    const results: Record<string, LoadResult[]> = {};
    const one = (make: (i: number) => LoadRequest, expect: number) => runLoad({ baseUrl: a.url, concurrency: CONCURRENCY, durationMs: DURATION_MS, prebuild: 20_000, make, expectStatus: expect });
    // Both processes at once, each with half the clients; the rate is the sum over the same window.
    const two = async (make: (i: number) => LoadRequest, expect: number): Promise<LoadResult> => {
      const half = Math.max(1, CONCURRENCY / 2);
      const [x, y] = await Promise.all([a.url, b.url].map((baseUrl) => runLoad({ baseUrl, concurrency: half, durationMs: DURATION_MS, prebuild: 10_000, make, expectStatus: expect })));
      return { requests: x!.requests + y!.requests, errors: x!.errors + y!.errors, statusCounts: {}, rps: x!.rps + y!.rps, p50ms: Math.max(x!.p50ms, y!.p50ms), p99ms: Math.max(x!.p99ms, y!.p99ms) };
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Which comes first alternates, so neither side always runs on a warmer database.
      const pairs: [string, () => Promise<LoadResult>][] = [
        ['create x1', () => one(createReq, 402)],
        ['create x2', () => two(createReq, 402)],
        ['status x1', () => one(statusReq, 200)],
        ['status x2', () => two(statusReq, 200)],
      ];
      if (round % 2 === 1) [pairs[0], pairs[1], pairs[2], pairs[3]] = [pairs[1]!, pairs[0]!, pairs[3]!, pairs[2]!];
      for (const [k, f] of pairs) {
        const r = await f();
        (results[k] ??= []).push(r);
        console.log(`round ${round + 1} ${k.padEnd(10)} ${r.rps.toFixed(0).padStart(6)}/s  p50 ${r.p50ms.toFixed(1)} ms  p99 ${r.p99ms.toFixed(1)} ms  errors ${r.errors}`);
      }
    }
    const load1 = loadavg();
    console.log(`\nmachine: ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`${ROUNDS} rounds × ${DURATION_MS / 1000} s, ${CONCURRENCY} clients in total, ${MERCHANTS} merchants; medians\n`);
    console.log('| workload | 1 api process | 2 api processes | 2 / 1 | p99 1 → 2 (ms) | errors |');
    console.log('|---|---|---|---|---|---|');
    for (const w of ['create', 'status']) {
      const x1 = results[`${w} x1`]!;
      const x2 = results[`${w} x2`]!;
      const r1 = median(x1.map((r) => r.rps));
      const r2 = median(x2.map((r) => r.rps));
      const errors = [...x1, ...x2].reduce((s, r) => s + r.errors, 0);
      console.log(`| ${w === 'create' ? 'createOrder' : 'getOrderStatus'} | ${r1.toFixed(0)}/s | ${r2.toFixed(0)}/s | ${(r2 / r1).toFixed(2)} | ${median(x1.map((r) => r.p99ms)).toFixed(0)} → ${median(x2.map((r) => r.p99ms)).toFixed(0)} | ${errors} |`);
    }
  } finally {
    await Promise.all([a.tg.stop(), b.tg.stop()]);
    await db.drop();
  }
}

await main();
