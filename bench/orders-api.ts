/**
 * createOrder/s and getOrderStatus/s with HMAC-signed requests against Tollgate on PostgreSQL,
 * compared in the same run with a bare fastify JSON route and with raw single-row INSERT+COMMIT
 * on the same Postgres. Each is run ROUNDS times, interleaved; medians are reported.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/orders-api.ts
 *
 * BENCH_BASELINE=<another checkout> also starts that checkout's `apps/server/bin/tollgate.js` on its
 * own scratch database and runs createOrder (one merchant, and 8 merchants) and getOrderStatus
 * against it in the same rounds, right before or after this checkout's (the order alternates), and
 * prints this/baseline:
 *
 *   BENCH_BASELINE=/tmp/tg-base BENCH_ONLY=create,spread,status npx tsx bench/orders-api.ts
 */
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { signedHeaders } from '@tollgate/protocol';
import { startGateway } from './lib/gateway.ts';
import { median, runLoad, type Clock, type LoadRequest, type LoadResult } from './lib/load.ts';
import { scratchDb } from './lib/db.ts';
import { cpuPerRequest, cpuSnapshot, type CpuReading, type CpuSnapshot } from './lib/cpu.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
// createOrder and the raw insert again at these client counts (BENCH_ONLY=sweep runs only them).
// Group commit trades latency for throughput, so a closed loop of few clients measures its latency;
// each side's rate is where more clients stop adding throughput. The raw insert holds one
// connection per client, and Postgres allows 100 by default (80 leaves room for Tollgate's pool).
const SWEEP = (process.env.BENCH_SWEEP ?? '16,48,64,80').split(',').filter(Boolean).map(Number);
// Requests built and signed before each round's clock starts (the round ends early if they run out).
const PREBUILD = Number(process.env.BENCH_PREBUILD ?? 60_000);
// BENCH_ONLY=create,status runs a subset; BENCH_CPU_PROF=dir writes the server's V8 CPU profile there.
const ONLY = process.env.BENCH_ONLY?.split(',');
const runs = (k: string) => !ONLY || ONLY.includes(k);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const BASELINE = process.env.BENCH_BASELINE;

async function rawInsertRate(url: string, clock: Clock, concurrency = CONCURRENCY): Promise<LoadResult> {
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_raw (id text PRIMARY KEY, payload text NOT NULL, amount numeric(78,0) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  // Every connection open before the clock starts, as autocannon's are.
  const conns = await Promise.all(Array.from({ length: concurrency }, () => pool.connect()));
  conns.forEach((c) => c.release());
  const lat: number[] = [];
  let n = 0;
  clock.onStart?.();
  const deadline = Date.now() + DURATION_MS;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const s = process.hrtime.bigint();
        await pool.query('INSERT INTO bench_raw (id, payload, amount) VALUES ($1, $2, $3)', [randomBytes(12).toString('hex'), 'x'.repeat(200), String(++n)]);
        lat.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    }),
  );
  const el = (Date.now() - t0) / 1000;
  clock.onEnd?.();
  await pool.end();
  lat.sort((a, b) => a - b);
  return { requests: lat.length, errors: 0, statusCounts: {}, rps: lat.length / el, p50ms: lat[Math.floor(lat.length / 2)]!, p99ms: lat[Math.floor(lat.length * 0.99)]! };
}

async function main() {
  const db = await scratchDb(BASE_DB);
  const gw = await startGateway(db.url, { nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [] });
  const { tg, url } = gw;
  // The baseline checkout's gateway on its own database (BENCH_BASELINE), its merchants made below.
  const baseDb = BASELINE ? await scratchDb(BASE_DB) : undefined;
  const base = baseDb ? await startGateway(baseDb.url, { bin: resolve(BASELINE!, 'apps/server/bin/tollgate.js') }) : undefined;
  const bare = spawn(process.execPath, ['--import', 'tsx', new URL('./lib/bare-fastify.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_DB_URL: db.url } });
  try {
    const bareUrl = await new Promise<string>((resolve) =>
      bare.stdout!.on('data', (d: Buffer) => {
        const m = /listening on (\S+)/.exec(d.toString());
        if (m) resolve(m[1]!);
      }),
    );
    const m = await gw.merchant('Bench');
    const creds = { apiKey: m.apiKey, apiSecret: m.apiSecret };
    // Eight more merchants: order creation of one merchant serializes on its fee-balance row, so
    // the spread workload shows what the gateway does when that row is not the bottleneck.
    const spread: { apiKey: string; apiSecret: string }[] = [];
    for (let k = 0; k < 8; k++) spread.push(await gw.merchant(`Bench ${k}`));
    const baseCreds = base ? await base.merchant('Bench') : undefined;
    const baseSpread: { apiKey: string; apiSecret: string }[] = [];
    for (let k = 0; base && k < 8; k++) baseSpread.push(await base.merchant(`Bench ${k}`));
    const run = randomBytes(3).toString('hex');
    const ids: string[] = [];
    const baseIds: string[] = [];
    let seq = 0;

    const results: Record<string, LoadResult[]> = { bare: [], bare402: [], onequery: [], create: [], spread: [], status: [], raw: [] };
    // CPU µs per request of each component (server, every postgres process, this process).
    const cpu: Record<string, CpuSnapshot[]> = {};
    // Snapshots are taken when the clock starts and stops (after prebuilding, before pools close).
    // `database`: count only that database's Postgres backends (two gateways, or other jobs on the cluster).
    const measured = async (k: string, pid: number | undefined, f: (clock: Clock) => Promise<LoadResult>, database?: string) => {
      let a: CpuReading | undefined;
      let b: CpuReading | undefined;
      const r = await f({ onStart: () => (a = cpuSnapshot(pid, database)), onEnd: () => (b = cpuSnapshot(pid, database)) });
      (cpu[k] ??= []).push(cpuPerRequest(a!, b!, r.requests));
      (results[k] ??= []).push(r);
    };
    const orderReq = (c: { apiKey: string; apiSecret: string }) => {
      const k = ++seq;
      const body = { dapp_order_id: `bench-${run}-${k}`, chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: String(1_000_000 + k) };
      return { method: 'POST', path: '/api/v1/orders', body: JSON.stringify(body), headers: signedHeaders({ ...c, body }) };
    };
    // Orders to read: the ones created above, or a batch made now when `create` did not run.
    const orderIds = async (gwUrl: string, dbUrl: string, c: { apiKey: string; apiSecret: string; merchantId: string }) => {
      for (let k = 0; k < 200 && !runs('create'); k++) {
        const r = orderReq(c);
        await fetch(gwUrl + r.path, { method: 'POST', headers: { 'content-type': 'application/json', ...r.headers }, body: r.body });
      }
      const client = new pg.Client({ connectionString: dbUrl });
      await client.connect();
      const { rows } = await client.query<{ id: string }>('SELECT id FROM orders WHERE merchant_id = $1 LIMIT 1000', [c.merchantId]);
      await client.end();
      return rows.map((r) => r.id);
    };
    const load =
      (base: string, expectStatus: number, make: (i: number) => LoadRequest, concurrency = CONCURRENCY) =>
      (clock: Clock) =>
        runLoad({ baseUrl: base, concurrency, durationMs: DURATION_MS, prebuild: PREBUILD, expectStatus, make, ...clock });
    for (let round = 0; round < ROUNDS; round++) {
      if (runs('bare'))
        await measured(
          'bare',
          bare.pid,
          load(bareUrl, 200, () => ({ method: 'GET', path: '/bare' })),
        );
      if (runs('bare402'))
        await measured(
          'bare402',
          bare.pid,
          load(bareUrl, 402, () => ({ ...orderReq(creds), path: '/post-402' })),
        );
      if (runs('onequery'))
        await measured(
          'onequery',
          bare.pid,
          load(bareUrl, 200, () => ({ method: 'GET', path: '/one-query' })),
        );
      // The baseline's createOrder right before (odd rounds) or after (even rounds) this checkout's.
      const baseline = async (k: 'create' | 'spread' | 'status', first: boolean) => {
        if (!base || !runs(k) || first !== (round % 2 === 1)) return;
        if (k === 'status') {
          if (baseIds.length === 0) baseIds.push(...(await orderIds(base.url, baseDb!.url, baseCreds!)));
          await measured(
            'base_status',
            base.tg.child.pid,
            load(base.url, 200, (i) => ({ method: 'GET', path: `/api/v1/orders/${baseIds[i % baseIds.length]}`, headers: signedHeaders(baseCreds!) })),
            baseDb!.name,
          );
          return;
        }
        await measured(
          `base_${k}`,
          base.tg.child.pid,
          load(base.url, 402, (i) => orderReq(k === 'create' ? baseCreds! : baseSpread[i % baseSpread.length]!)),
          baseDb!.name,
        );
      };
      await baseline('create', true);
      if (runs('create'))
        await measured(
          'create',
          tg.child.pid,
          load(url, 402, () => orderReq(creds)),
          base && db.name,
        );
      await baseline('create', false);
      // Right after createOrder, so the pair shares the machine's moment (per-round ratio below).
      if (runs('raw')) await measured('raw', undefined, (clock) => rawInsertRate(db.url, clock));
      await baseline('spread', true);
      if (runs('spread'))
        await measured(
          'spread',
          tg.child.pid,
          load(url, 402, (i) => orderReq(spread[i % spread.length]!)),
          base && db.name,
        );
      await baseline('spread', false);
      await baseline('status', true);
      if (runs('status')) {
        if (ids.length === 0) ids.push(...(await orderIds(url, db.url, { ...creds, merchantId: m.merchantId })));
        await measured(
          'status',
          tg.child.pid,
          load(url, 200, (i) => ({ method: 'GET', path: `/api/v1/orders/${ids[i % ids.length]}`, headers: signedHeaders(creds) })),
          base && db.name,
        );
      }
      await baseline('status', false);
      if (runs('sweep')) {
        for (const c of SWEEP) {
          await measured(
            `create@${c}`,
            tg.child.pid,
            load(url, 402, () => orderReq(creds), c),
          );
          await measured(`raw@${c}`, undefined, (clock) => rawInsertRate(db.url, clock, c));
        }
      }
    }
    const row = (name: string, rs: LoadResult[]) => `| ${name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50ms)).toFixed(2)} | ${median(rs.map((r) => r.p99ms)).toFixed(2)} | ${rs.reduce((a, r) => a + r.errors, 0)} |`;
    const med = (k: string) => median(results[k]!.map((r) => r.rps));
    console.log(`\nrounds=${ROUNDS} duration=${DURATION_MS}ms concurrency=${CONCURRENCY}\n`);
    console.log('| workload | req/s (median) | p50 ms | p99 ms | non-expected statuses |');
    console.log('|---|---|---|---|---|');
    const names: Record<string, string> = {
      bare: 'bare fastify GET (ceiling)',
      bare402: 'bare fastify POST answering a 402 of the same size (HTTP ceiling of createOrder)',
      onequery: 'fastify GET running one SELECT 1 via pg (DB-route ceiling)',
      create: 'createOrder (signed POST, 402), one merchant',
      spread: 'createOrder, 8 merchants round-robin',
      status: 'getOrderStatus (signed GET)',
      raw: 'raw INSERT+COMMIT on the same Postgres',
      ...(base ? { base_create: 'BASELINE createOrder, one merchant', base_spread: 'BASELINE createOrder, 8 merchants round-robin', base_status: 'BASELINE getOrderStatus (signed GET)' } : {}),
    };
    // A baseline row runs with its workload (base_create with create).
    const shown = (k: string) => runs(k.replace(/^base_/, ''));
    for (const [k, name] of Object.entries(names)) if (shown(k)) console.log(row(name, results[k]!));
    console.log('\nCPU µs per request (medians over rounds; prebuilding the signed requests is outside the clock):\n');
    console.log('| workload | server | postgres (all processes) | load generator / pg client | total |');
    console.log('|---|---|---|---|---|');
    for (const [k, name] of Object.entries(names)) {
      if (!shown(k)) continue;
      const m = (f: keyof CpuSnapshot) => median(cpu[k]!.map((c) => c[f]));
      console.log(`| ${name} | ${m('server').toFixed(0)} | ${m('postgres').toFixed(0)} | ${m('bench').toFixed(0)} | ${(m('server') + m('postgres') + m('bench')).toFixed(0)} |`);
    }
    const ratio = (a: string, b: string) => (med(a) / med(b)).toFixed(2);
    // Per-round ratios pair workloads run seconds apart, so a slow minute of the VM hits both.
    const perRound = (a: string, b: string) => median(results[a]!.map((r, k) => r.rps / results[b]![k]!.rps)).toFixed(2);
    for (const k of base ? (['create', 'spread', 'status'] as const).filter(runs) : []) {
      const cpuRatio = median(cpu[k]!.map((c, i) => (c.server + c.postgres) / (cpu[`base_${k}`]![i]!.server + cpu[`base_${k}`]![i]!.postgres))).toFixed(2);
      console.log(
        `\n${names[k]}: this/baseline req/s = ${ratio(k, `base_${k}`)} (ratio of medians), ${perRound(k, `base_${k}`)} (median of per-round ratios: ${results[k]!.map((r, i) => (r.rps / results[`base_${k}`]![i]!.rps).toFixed(2)).join(', ')}); server+postgres CPU per order this/baseline = ${cpuRatio}`,
      );
    }
    if (runs('create') && runs('raw')) console.log(`\ncreateOrder / raw insert = ${ratio('create', 'raw')} (medians), ${perRound('create', 'raw')} (median of per-round ratios)`);
    if (runs('spread') && runs('raw')) console.log(`createOrder 8 merchants / raw insert = ${ratio('spread', 'raw')} (medians), ${perRound('spread', 'raw')} (per round)`);
    if (runs('sweep')) {
      // The rate of each side is its best level; the per-level ratios show how the gap closes.
      const levels = [...(runs('create') && runs('raw') ? [CONCURRENCY] : []), ...SWEEP].sort((a, b) => a - b);
      const key = (w: string, c: number) => (c === CONCURRENCY && !SWEEP.includes(c) ? w : `${w}@${c}`);
      console.log('\n| clients | createOrder req/s | p50 ms | raw insert req/s | createOrder / raw (per round) |');
      console.log('|---|---|---|---|---|');
      for (const c of levels) {
        const [cr, rw] = [results[key('create', c)]!, results[key('raw', c)]!];
        console.log(`| ${c} | ${median(cr.map((r) => r.rps)).toFixed(0)} | ${median(cr.map((r) => r.p50ms)).toFixed(2)} | ${median(rw.map((r) => r.rps)).toFixed(0)} | ${median(cr.map((r, i) => r.rps / rw[i]!.rps)).toFixed(2)} |`);
      }
      const peak = (w: string) => Math.max(...levels.map((c) => med(key(w, c))));
      console.log(`\npeak createOrder / peak raw insert = ${(peak('create') / peak('raw')).toFixed(2)} (best median of each over ${levels.join(', ')} clients)`);
    }
    if (runs('status') && runs('onequery'))
      console.log(`getOrderStatus / one-query route = ${ratio('status', 'onequery')} (medians), ${perRound('status', 'onequery')} (per round)${base ? `; BASELINE ${ratio('base_status', 'onequery')}, ${perRound('base_status', 'onequery')}` : ''}`);
    if (base && runs('create') && runs('raw')) console.log(`BASELINE createOrder / raw insert = ${ratio('base_create', 'raw')} (medians), ${perRound('base_create', 'raw')} (per round)`);
    if (runs('status') && runs('bare')) console.log(`getOrderStatus / bare = ${ratio('status', 'bare')}; createOrder / one-query route = ${runs('onequery') ? ratio('create', 'onequery') : 'n/a'}`);
    for (const [k, rs] of Object.entries(results)) for (const r of rs) if (r.errors) console.log(`${k}: status counts ${JSON.stringify(r.statusCounts)}`);
  } finally {
    bare.kill('SIGTERM');
    await tg.stop();
    await base?.tg.stop();
    await baseDb?.drop();
    if (process.env.BENCH_SHOW_SERVER) console.log(tg.output());
    await db.drop();
  }
}

await main();
