/**
 * Interleaved A/B of createOrder throughput: two Tollgate API processes, each on its own scratch
 * Postgres database, loaded in alternating rounds (A B, B A, …) so a slow minute of the VM hits
 * both. Each side may get extra SQL after its migrations (an index or a constraint to try) and
 * extra environment. Prints per-round rates, CPU µs per order (server, every postgres process,
 * this load generator) and the median of the per-round B/A ratios.
 *
 *   B_SQL='DROP INDEX orders_expiry_idx' BENCH_ROUNDS=6 npx tsx bench/ab.ts
 *   A_ENV='{"SOME_VAR":"1"}' B_ENV='{}' npx tsx bench/ab.ts
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { signedHeaders } from '@tollgate/protocol';
import { startGateway } from './lib/gateway.ts';
import { median, runLoad } from './lib/load.ts';
import { scratchDb } from './lib/db.ts';
import { cpuPerRequest, cpuSnapshot, type CpuReading, type CpuSnapshot } from './lib/cpu.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

async function startSide(name: string, sql: string | undefined, env: Record<string, string>) {
  const db = await scratchDb(BASE_DB);
  const gw = await startGateway(db.url, { env });
  if (sql) {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query(sql);
    await c.end();
  }
  const m = await gw.merchant(`Bench ${name}`);
  return { name, db, tg: gw.tg, url: gw.url, creds: { apiKey: m.apiKey, apiSecret: m.apiSecret }, rps: [] as number[], cpu: [] as CpuSnapshot[] };
}

async function main() {
  const sides = [await startSide('A', process.env.A_SQL, JSON.parse(process.env.A_ENV ?? '{}')), await startSide('B', process.env.B_SQL, JSON.parse(process.env.B_ENV ?? '{}'))];
  const run = randomBytes(3).toString('hex');
  let seq = 0;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of r % 2 ? [...sides].reverse() : sides) {
        let a: CpuReading | undefined;
        let b: CpuReading | undefined;
        const res = await runLoad({
          baseUrl: s.url,
          concurrency: CONCURRENCY,
          durationMs: DURATION_MS,
          prebuild: 60_000,
          expectStatus: 402,
          onStart: () => (a = cpuSnapshot(s.tg.child.pid)),
          onEnd: () => (b = cpuSnapshot(s.tg.child.pid)),
          make: () => {
            const body = { dapp_order_id: `ab-${run}-${++seq}`, chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: String(1_000_000 + seq) };
            return { method: 'POST', path: '/api/v1/orders', body: JSON.stringify(body), headers: signedHeaders({ ...s.creds, body }) };
          },
        });
        const c = cpuPerRequest(a!, b!, res.requests);
        s.rps.push(res.rps);
        s.cpu.push(c);
        console.log(`round ${r} ${s.name}: ${res.rps.toFixed(0)}/s; CPU µs/order server ${c.server.toFixed(0)}, postgres ${c.postgres.toFixed(0)}, load ${c.bench.toFixed(0)}${res.errors ? `; unexpected statuses ${JSON.stringify(res.statusCounts)}` : ''}`);
      }
    }
    for (const s of sides) {
      const m = (k: keyof CpuSnapshot) => median(s.cpu.map((c) => c[k])).toFixed(0);
      console.log(`${s.name}: ${median(s.rps).toFixed(0)}/s (median); CPU µs/order server ${m('server')}, postgres ${m('postgres')}, load ${m('bench')}`);
    }
    console.log(`B/A = ${median(sides[1]!.rps.map((x, i) => x / sides[0]!.rps[i]!)).toFixed(3)} (median of per-round ratios)`);
  } finally {
    for (const s of sides) {
      await s.tg.stop();
      await s.db.drop();
    }
  }
}

await main();
