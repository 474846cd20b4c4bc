/**
 * createOrder/s and getOrderStatus/s with HMAC-signed requests against Tollgate on PostgreSQL,
 * compared in the same run with a bare fastify JSON route and with raw single-row INSERT+COMMIT
 * on the same Postgres. Each is run ROUNDS times, interleaved; medians are reported.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/orders-api.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { signedHeaders } from '@tollgate/protocol';
import { spawnTollgate } from '../apps/server/test/helpers/process.ts';
import { median, runLoad, type LoadRequest, type LoadResult } from './lib/load.ts';
import { scratchDb } from './lib/db.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
// Requests built and signed before each round's clock starts (the round ends early if they run out).
const PREBUILD = Number(process.env.BENCH_PREBUILD ?? 60_000);
const ADMIN = 'bench-admin-token-0123456789';
// BENCH_ONLY=create,status runs a subset; BENCH_CPU_PROF=dir writes the server's V8 CPU profile there.
const ONLY = process.env.BENCH_ONLY?.split(',');
const runs = (k: string) => !ONLY || ONLY.includes(k);
const CPU_PROF = process.env.BENCH_CPU_PROF;

async function rawInsertRate(url: string): Promise<LoadResult> {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_raw (id text PRIMARY KEY, payload text NOT NULL, amount numeric(78,0) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  const lat: number[] = [];
  let n = 0;
  const deadline = Date.now() + DURATION_MS;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        const s = process.hrtime.bigint();
        await pool.query('INSERT INTO bench_raw (id, payload, amount) VALUES ($1, $2, $3)', [randomBytes(12).toString('hex'), 'x'.repeat(200), String(++n)]);
        lat.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    }),
  );
  const el = (Date.now() - t0) / 1000;
  await pool.end();
  lat.sort((a, b) => a - b);
  return { requests: lat.length, errors: 0, statusCounts: {}, rps: lat.length / el, p50ms: lat[Math.floor(lat.length / 2)]!, p99ms: lat[Math.floor(lat.length * 0.99)]! };
}

async function main() {
  const db = await scratchDb(BASE_DB);
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-'));
  const cfg = join(dir, 'tollgate.json');
  writeFileSync(cfg, JSON.stringify({
    environment: 'test',
    chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:1', tokens: [{ symbol: 'USDC', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', decimals: 6 }] }],
  }));
  const tg = spawnTollgate(['serve', '--role', 'api'], { DATABASE_URL: db.url, TOLLGATE_CONFIG: cfg, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: ADMIN, PORT: '0', LOG_LEVEL: 'warn'
  }, undefined, CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []);
  const bare = spawn(process.execPath, ['--import', 'tsx', new URL('./lib/bare-fastify.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_DB_URL: db.url } });
  try {
    const url = (await tg.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1]!;
    const bareUrl = await new Promise<string>((resolve) => bare.stdout!.on('data', (d: Buffer) => { const m = /listening on (\S+)/.exec(d.toString()); if (m) resolve(m[1]!); }));
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
    const m = await admin('POST', '/admin/v1/merchants', { name: 'Bench' });
    await admin('POST', `/admin/v1/merchants/${m.merchant_id}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: '0x' + '11'.repeat(20) });
    await admin('POST', `/admin/v1/merchants/${m.merchant_id}/fee-balance/top-ups`, { amount: '10000000' });
    const creds = { apiKey: m.api_key as string, apiSecret: m.api_secret as string };
    // Eight more merchants: order creation of one merchant serializes on its fee-balance row, so
    // the spread workload shows what the gateway does when that row is not the bottleneck.
    const spread: { apiKey: string; apiSecret: string }[] = [];
    for (let k = 0; k < 8; k++) {
      const mk = await admin('POST', '/admin/v1/merchants', { name: `Bench ${k}` });
      await admin('POST', `/admin/v1/merchants/${mk.merchant_id}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: '0x' + '11'.repeat(20) });
      await admin('POST', `/admin/v1/merchants/${mk.merchant_id}/fee-balance/top-ups`, { amount: '10000000' });
      spread.push({ apiKey: mk.api_key, apiSecret: mk.api_secret });
    }
    const run = randomBytes(3).toString('hex');
    const ids: string[] = [];
    let seq = 0;

    const results: Record<string, LoadResult[]> = { bare: [], onequery: [], create: [], spread: [], status: [], raw: [] };
    const orderReq = (c: { apiKey: string; apiSecret: string }) => {
      const k = ++seq;
      const body = { dapp_order_id: `bench-${run}-${k}`, chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: String(1_000_000 + k) };
      return { method: 'POST', path: '/api/v1/orders', body: JSON.stringify(body), headers: signedHeaders({ ...c, body }) };
    };
    const load = (base: string, expectStatus: number, make: (i: number) => LoadRequest) =>
      runLoad({ baseUrl: base, concurrency: CONCURRENCY, durationMs: DURATION_MS, prebuild: PREBUILD, expectStatus, make });
    for (let round = 0; round < ROUNDS; round++) {
      if (runs('bare')) results.bare!.push(await load(bareUrl, 200, () => ({ method: 'GET', path: '/bare' })));
      if (runs('onequery')) results.onequery!.push(await load(bareUrl, 200, () => ({ method: 'GET', path: '/one-query' })));
      if (runs('create')) results.create!.push(await load(url, 402, () => orderReq(creds)));
      // Right after createOrder, so the pair shares the machine's moment (per-round ratio below).
      if (runs('raw')) results.raw!.push(await rawInsertRate(db.url));
      if (runs('spread')) results.spread!.push(await load(url, 402, (i) => orderReq(spread[i % spread.length]!)));
      if (runs('status')) {
        if (ids.length === 0) {
          // Orders to read: the ones created above, or a batch made now when `create` did not run.
          for (let k = 0; k < 200 && !runs('create'); k++) {
            const r = orderReq(creds);
            await fetch(url + r.path, { method: 'POST', headers: { 'content-type': 'application/json', ...r.headers }, body: r.body });
          }
          const c = new pg.Client({ connectionString: db.url });
          await c.connect();
          const { rows } = await c.query<{ id: string }>('SELECT id FROM orders WHERE merchant_id = $1 LIMIT 1000', [m.merchant_id]);
          await c.end();
          ids.push(...rows.map((r) => r.id));
        }
        results.status!.push(await load(url, 200, (i) => ({ method: 'GET', path: `/api/v1/orders/${ids[i % ids.length]}`, headers: signedHeaders(creds) })));
      }
    }
    const row = (name: string, rs: LoadResult[]) =>
      `| ${name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50ms)).toFixed(2)} | ${median(rs.map((r) => r.p99ms)).toFixed(2)} | ${rs.reduce((a, r) => a + r.errors, 0)} |`;
    const med = (k: string) => median(results[k]!.map((r) => r.rps));
    console.log(`\nrounds=${ROUNDS} duration=${DURATION_MS}ms concurrency=${CONCURRENCY}\n`);
    console.log('| workload | req/s (median) | p50 ms | p99 ms | non-expected statuses |');
    console.log('|---|---|---|---|---|');
    const names: Record<string, string> = {
      bare: 'bare fastify GET (ceiling)',
      onequery: 'fastify GET running one SELECT 1 via pg (DB-route ceiling)',
      create: 'createOrder (signed POST, 402), one merchant',
      spread: 'createOrder, 8 merchants round-robin',
      status: 'getOrderStatus (signed GET)',
      raw: 'raw INSERT+COMMIT on the same Postgres',
    };
    for (const [k, name] of Object.entries(names)) if (runs(k)) console.log(row(name, results[k]!));
    const ratio = (a: string, b: string) => (med(a) / med(b)).toFixed(2);
    // Per-round ratios pair workloads run seconds apart, so a slow minute of the VM hits both.
    const perRound = (a: string, b: string) => median(results[a]!.map((r, k) => r.rps / results[b]![k]!.rps)).toFixed(2);
    if (runs('create') && runs('raw')) console.log(`\ncreateOrder / raw insert = ${ratio('create', 'raw')} (medians), ${perRound('create', 'raw')} (median of per-round ratios)`);
    if (runs('spread') && runs('raw')) console.log(`createOrder 8 merchants / raw insert = ${ratio('spread', 'raw')} (medians), ${perRound('spread', 'raw')} (per round)`);
    if (runs('status') && runs('bare')) console.log(`getOrderStatus / bare = ${ratio('status', 'bare')}; createOrder / one-query route = ${runs('onequery') ? ratio('create', 'onequery') : 'n/a'}`);
    for (const [k, rs] of Object.entries(results)) for (const r of rs) if (r.errors) console.log(`${k}: status counts ${JSON.stringify(r.statusCounts)}`);
  } finally {
    bare.kill('SIGTERM');
    await tg.stop();
    if (process.env.BENCH_SHOW_SERVER) console.log(tg.output());
    await db.drop();
  }
}

await main();
