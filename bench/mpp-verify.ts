/**
 * Machine-payment verify/s against getOrderStatus/s in the same run, on PostgreSQL and a real anvil
 * chain, with Tollgate as an operator runs it (`serve --role api`, one child process):
 * - `verify (first)`: the first verify of a final payment. With the worker process running (the
 *   default, as an operator deploys `--role api` beside `--role worker`), the chain watcher has
 *   indexed the transfers before the round starts: one indexed read (chain_transfers + cursor)
 *   and the claim (one statement per batch of concurrent verifies: challenge update, claim row,
 *   `mpp.payment.confirmed` event) with its EdDSA receipt. Each prepared payment is verified once:
 *   the round ends when the set is used up. With
 *   BENCH_MPP_WATCHER=0 there is no watcher: JSON-RPC reads (receipt, block, head) to the node;
 * - `verify (repeat)`: the same verify again — the stored receipt, no chain read;
 * - `getOrderStatus`: the signed GET of orders-api.ts.
 * An unmeasured warm-up runs every workload once (BENCH_MPP_WARMUP paid challenges, default 1500);
 * then rounds are interleaved; medians are reported. Each first-verify round has its own fresh set of
 * paid challenges, so no request of that round can be a repeat.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/mpp-verify.ts
 *
 * BENCH_BASELINE=<another checkout>: that checkout's Tollgate (its bench/lib/serve-unlimited.ts, API
 * and worker, its own scratch database, its merchant paid at another wallet) runs beside this one
 * on the same anvil; each round runs every workload on both (the order alternates) and the
 * this/baseline ratios are printed:
 *
 *   BENCH_BASELINE=/tmp/tg-base npx tsx bench/mpp-verify.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signedHeaders } from '@tollgate/protocol';
import { mine, rpcRequest, startDevChain, transferToken } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { adminCall, writeGatewayConfig } from '../apps/server/test/helpers/reliability.ts';
import { TEST_ADMIN_TOKEN } from '../apps/server/test/helpers/server.ts';
import { scratchDb } from './lib/db.ts';
import { cpuPerRequest, cpuSnapshot, type CpuReading, type CpuSnapshot } from './lib/cpu.ts';
import { median, runLoad, type LoadRequest, type LoadResult } from './lib/load.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** Paid challenges prepared per first-verify round: more than a round can consume. */
const PER_ROUND = Number(process.env.BENCH_MPP_PER_ROUND ?? 6000);
// Paid challenges of the unmeasured warm-up (0: none).
const WARMUP = Number(process.env.BENCH_MPP_WARMUP ?? 1500);
const BASELINE = process.env.BENCH_BASELINE;
/** Run the worker role (chain watcher) beside the API process; 0 measures the node-only verify path. */
const WATCHER = process.env.BENCH_MPP_WATCHER !== '0';

/** The API process's batch counters (/metrics): per batcher, statements and items so far. */
async function batchCounters(base: string): Promise<Map<string, { batches: number; items: number }>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<string, { batches: number; items: number }>();
  for (const m of text.matchAll(/^tollgate_db_batch(es|_items)_total\{batcher="([^"]+)"\} (\d+)/gm)) {
    const c = out.get(m[2]!) ?? { batches: 0, items: 0 };
    if (m[1] === 'es') c.batches = Number(m[3]);
    else c.items = Number(m[3]);
    out.set(m[2]!, c);
  }
  return out;
}

/** Mean items per statement of each batcher that ran between two readings, e.g. "mpp_reads 9.8". */
function batchSizes(a: Map<string, { batches: number; items: number }>, b: Map<string, { batches: number; items: number }>): string {
  const parts: string[] = [];
  for (const [k, v] of b) {
    const n = v.batches - (a.get(k)?.batches ?? 0);
    if (n > 0) parts.push(`${k} ${((v.items - (a.get(k)?.items ?? 0)) / n).toFixed(1)}`);
  }
  return parts.join(', ') || 'none';
}

async function post(base: string, path: string, body: unknown): Promise<any> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return r.json();
}

/** One gateway under test: API and worker processes on a scratch database, with one merchant. */
interface Side {
  name: string;
  url: string;
  tg: ChildProcess;
  worker: ChildProcess | undefined;
  pgc: pg.Client;
  db: Awaited<ReturnType<typeof scratchDb>>;
  merchantId: string;
  creds: { apiKey: string; apiSecret: string };
  orderId: string;
  /** The merchant's wallet: each side its own, so each watcher indexes only its own payments. */
  wallet: string;
}

/** Starts a side whose processes run `serveScript` (this checkout's or the baseline's serve-unlimited.ts). */
async function startSide(name: string, serveScript: string, wallet: string, dev: Awaited<ReturnType<typeof startDevChain>>, sides: Side[]): Promise<Side> {
  const db = await scratchDb(BASE_DB);
  const cfg = writeGatewayConfig(mkdtempSync(join(tmpdir(), 'tg-bench-mpp-')), dev, { confirmations: 1, finality: 1, pollMs: 1000 });
  // Tollgate as `serve --role api` runs it, in its own process, without per-IP rate limits.
  const masterKey = randomBytes(32).toString('hex');
  // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the API process, written when it exits.
  const prof = (role: string) => (process.env.BENCH_CPU_PROF && role === 'api' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []);
  const serve = (role: 'api' | 'worker') =>
    spawn(process.execPath, [...prof(role), '--import', 'tsx', serveScript], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.url, TOLLGATE_CONFIG: cfg, MASTER_KEY: masterKey, ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn', BENCH_ROLE: role },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  const side: Side = { name, url: '', tg: serve('api'), worker: undefined, pgc: new pg.Client({ connectionString: db.url }), db, merchantId: '', creds: { apiKey: '', apiSecret: '' }, orderId: '', wallet };
  // Registered at once, so the caller's cleanup stops whatever started.
  sides.push(side);
  const { tg, pgc } = side;
  const url = (side.url = await new Promise<string>((resolve, reject) => {
    let out = '';
    tg.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    tg.once('exit', (code) => reject(new Error(`gateway exited ${code}: ${out}`)));
  }));
  await pgc.connect();
  // The worker starts after the API process has migrated the database.
  if (WATCHER) (side.worker = serve('worker')).stdout!.resume();
  const m = (await adminCall(url, 'POST', '/admin/v1/merchants', { name: 'bench' })).body;
  await adminCall(url, 'POST', `/admin/v1/merchants/${m.merchant_id}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: wallet });
  await adminCall(url, 'POST', `/admin/v1/merchants/${m.merchant_id}/fee-balance/top-ups`, { amount: '1000' });
  await adminCall(url, 'PUT', `/admin/v1/merchants/${m.merchant_id}/mpp/routes/GET:api:data`, { amount_wei: '1000', chain_id: 31337, token_symbol: 'USDC' });
  if (WATCHER) {
    // A watcher starting on a fresh database begins at head − finality (chain/evm/scan.ts): wait
    // for its cursor before paying, or the first set's transfers would precede it, unindexed.
    for (let t = 0; !(await pgc.query('SELECT 1 FROM chain_cursors WHERE chain_id = 31337')).rowCount; t++) {
      if (t > 1200) throw new Error('the chain watcher did not start in 120 s');
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  side.merchantId = m.merchant_id;
  side.creds = { apiKey: m.api_key as string, apiSecret: m.api_secret as string };
  const orderBody = { dapp_order_id: 'bench-status', chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: '1000000' };
  side.orderId = (await (await fetch(url + '/api/v1/orders', { method: 'POST', headers: { 'content-type': 'application/json', ...signedHeaders({ ...side.creds, body: orderBody }) }, body: JSON.stringify(orderBody) })).json()).order_id;
  return side;
}

async function main() {
  const dev = await startDevChain({ chainId: 31337 });
  const sides: Side[] = [];
  try {
    await startSide('this', fileURLToPath(new URL('./lib/serve-unlimited.ts', import.meta.url)), '0x' + '11'.repeat(20), dev, sides);
    if (BASELINE) await startSide('baseline', resolve(BASELINE, 'bench/lib/serve-unlimited.ts'), '0x' + '12'.repeat(20), dev, sides);
    const usdc = dev.tokens[0]!.address;

    /** `n` challenges of a side, each paid by its own final transfer (payers in parallel, each in nonce order). */
    let seq = 0;
    async function paidSet(side: Side, n = PER_ROUND): Promise<LoadRequest[]> {
      const { url, pgc } = side;
      const out: LoadRequest[] = new Array(n);
      await rpcRequest(dev.rpcUrl, 'evm_setAutomine', [false]);
      const per = Math.ceil(n / dev.payers.length);
      await Promise.all(
        dev.payers.map(async (p, pi) => {
          let nonce = Number(await rpcRequest<string>(dev.rpcUrl, 'eth_getTransactionCount', [p.address, 'pending']));
          for (let k = pi * per; k < Math.min(n, (pi + 1) * per); k++) {
            const c = await post(url, '/mpp/v1/challenge', { merchant_id: side.merchantId, route_canonical: 'GET:api:data', request_canonical: `GET:api:data:${++seq}`, payer_addr: p.address });
            const tx = await transferToken({ rpcUrl: dev.rpcUrl, chainId: 31337, privateKey: p.privateKey, token: usdc, to: side.wallet as Hex, amount: 1000n, nonce: nonce++ });
            out[k] = { method: 'POST', path: '/mpp/v1/verify', body: JSON.stringify({ challenge_id: c.challenge_id, tx_hash: tx, payer_addr: p.address, mac: c.mac }) };
          }
        }),
      );
      // Mined here, block by block, until the pool is empty. Under load anvil's automine leaves
      // some transfers unmined for good (foundry-rs/foundry#10122, "block mining misses ready
      // transactions"), and each stuck one also strands every later nonce of its payer, in this
      // round and the next. Then keep only the transfers with a receipt, so a first-verify round
      // measures final payments only.
      for (let blocks = 0; blocks < 100; blocks++) {
        await mine(dev.rpcUrl, 1);
        const pool = await rpcRequest<{ pending: string }>(dev.rpcUrl, 'txpool_status', []);
        if (Number(pool.pending) === 0) break;
      }
      const has: boolean[] = [];
      for (let k = 0; k < out.length; k += 200) {
        has.push(...(await Promise.all(out.slice(k, k + 200).map(async (r) => Boolean(await rpcRequest(dev.rpcUrl, 'eth_getTransactionReceipt', [JSON.parse(r.body!).tx_hash]))))));
      }
      const mined = out.filter((_, i) => has[i]);
      if (mined.length < out.length) console.log(`paid set: ${out.length - mined.length} of ${out.length} transfers never mined by anvil; left out of the round`);
      if (WATCHER) {
        // Wait until the watcher has scanned the chain's head (every transfer of the set indexed).
        const head = BigInt(await rpcRequest<string>(dev.rpcUrl, 'eth_blockNumber', []));
        for (let t = 0; ; t++) {
          const r = await pgc.query<{ block_number: string }>('SELECT block_number::text FROM chain_cursors WHERE chain_id = 31337');
          if (r.rows[0] && BigInt(r.rows[0].block_number) >= head) break;
          if (t > 600) throw new Error('the chain watcher did not reach the head in 60 s');
          await new Promise((res) => setTimeout(res, 100));
        }
      }
      return mined;
    }

    // Per side, then per workload.
    const allResults: Record<string, Record<string, LoadResult[]>> = {};
    // CPU µs per request of each component (API process, worker process, Postgres, this load
    // generator): what a request costs whatever else the machine is doing, unlike req/s.
    const cpus: Record<string, Record<string, (CpuSnapshot & { worker: number })[]>> = {};
    for (const side of sides) {
      allResults[side.name] = { first: [], repeat: [], status: [] };
      cpus[side.name] = { first: [], repeat: [], status: [] };
    }
    const measured = (side: Side, name: string) => {
      const { tg, worker, db } = side;
      const cpu = cpus[side.name]!;
      let a: CpuReading | undefined;
      let wa = 0;
      const workerMs = () => (worker?.pid ? cpuSnapshot(worker.pid).server : 0);
      let t0 = 0n;
      return {
        onStart: () => ((a = cpuSnapshot(tg.pid, db.name)), (wa = workerMs()), (t0 = process.hrtime.bigint())),
        done: (r: LoadResult) => {
          const b = cpuSnapshot(tg.pid, db.name);
          // The window on the monotonic clock V8 profiles use: `bench/lib/profile-window.ts <profile> <from> <to>`.
          if (process.env.BENCH_CPU_PROF) console.log(`profile window ${name}: ${t0 / 1000n} ${process.hrtime.bigint() / 1000n}`);
          cpu[name]!.push({ ...cpuPerRequest(a!, b, r.requests), worker: ((workerMs() - wa) * 1000) / Math.max(1, r.requests) });
          return r;
        },
      };
    };
    // Warm-up, not measured: every workload once, so V8 has compiled their code paths before the
    // first measured round (perf showed the API's compiler threads busy through round 0's first
    // verifies, the first time that path ran in the process).
    for (const side of WARMUP > 0 ? sides : []) {
      const { url, orderId, creds } = side;
      const warm = await paidSet(side, WARMUP);
      await runLoad({ baseUrl: url, concurrency: CONCURRENCY, durationMs: DURATION_MS, requests: warm.length, expectStatus: 200, make: (i) => warm[i]! });
      await runLoad({ baseUrl: url, concurrency: CONCURRENCY, durationMs: 1000, expectStatus: 200, make: (i) => warm[i % warm.length]! });
      await runLoad({ baseUrl: url, concurrency: CONCURRENCY, durationMs: 1000, prebuild: 5_000, expectStatus: 200, make: () => ({ method: 'GET', path: `/api/v1/orders/${orderId}`, headers: signedHeaders(creds) }) });
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which side goes first, so neither always meets the warmer machine.
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const { url, pgc, worker, orderId, creds } = side;
        const results = allResults[side.name]!;
        /** Runs a workload and prints the mean statement size of each batcher it used. */
        const batched = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
          const a = await batchCounters(url);
          // BENCH_ANNOUNCE=1: a line as each workload starts (to attach perf or strace to it).
          if (process.env.BENCH_ANNOUNCE === '1') console.log(`round ${round} ${name}: start`);
          // BENCH_SAMPLE_WAITS=1: what this database's backends are doing, sampled every 5 ms.
          const waits = new Map<string, number>();
          let sampling = process.env.BENCH_SAMPLE_WAITS === '1';
          const sampler = (async () => {
            while (sampling) {
              const { rows } = await pgc.query<{ w: string }>(
                `SELECT state || ':' || coalesce(wait_event_type || '/' || wait_event, 'cpu') AS w FROM pg_stat_activity
                  WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
              );
              for (const r of rows) waits.set(r.w, (waits.get(r.w) ?? 0) + 1);
              await new Promise((res) => setTimeout(res, 5));
            }
          })();
          const r = await run();
          sampling = false;
          await sampler;
          console.log(`round ${round} ${side.name} ${name}: items per statement: ${batchSizes(a, await batchCounters(url))}`);
          if (waits.size) console.log(`round ${round} ${side.name} ${name}: backend samples ${JSON.stringify(Object.fromEntries([...waits].sort((x, y) => y[1] - x[1])))}`);
          return r;
        };
        const set = await paidSet(side);
        if (process.env.BENCH_PAUSE_WORKER === '1') worker?.kill('SIGSTOP');
        const mf = measured(side, 'first');
        // Each prepared payment is verified once: the round ends when the set is used up (its rate is
        // over the time that took), never padded with cheaper requests.
        const first = mf.done(
          await batched('first', () => runLoad({ onStart: mf.onStart, baseUrl: url, concurrency: CONCURRENCY, durationMs: DURATION_MS, requests: set.length, prebuild: 0, expectStatus: 200, make: (i) => set[i] ?? { method: 'GET', path: '/exhausted' } })),
        );
        results.first!.push(first);
        if (first.statusCounts[202]) {
          // Which requests were still pending, and why (printed, never hidden in the rate).
          for (const r of set.slice(0, first.requests)) {
            const res = await fetch(url + r.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: r.body });
            if (res.status === 202) {
              const body = await res.json();
              // What the node itself says about that transaction (is it mined, pending, unknown?).
              const ask = (method: string) => fetch(dev.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [body.tx_hash] }) }).then((x) => x.json());
              const [rcpt, tx] = await Promise.all([ask('eth_getTransactionReceipt'), ask('eth_getTransactionByHash')]);
              console.log(
                `round ${round}: a verify still answers 202 after the round: ${JSON.stringify(body)}; node: receipt ${rcpt.result ? `block ${rcpt.result.blockNumber} status ${rcpt.result.status}` : JSON.stringify(rcpt.error ?? null)}, tx ${tx.result ? `block ${tx.result.blockNumber}` : JSON.stringify(tx.error ?? null)}`,
              );
              break;
            }
          }
        }
        const mr = measured(side, 'repeat');
        results.repeat!.push(mr.done(await batched('repeat', () => runLoad({ onStart: mr.onStart, baseUrl: url, concurrency: CONCURRENCY, durationMs: DURATION_MS, expectStatus: 200, make: (i) => set[i % Math.min(first.requests, set.length)]! }))));
        const ms = measured(side, 'status');
        results.status!.push(
          ms.done(
            await batched('status', () =>
              runLoad({ onStart: ms.onStart, baseUrl: url, concurrency: CONCURRENCY, durationMs: DURATION_MS, prebuild: 20_000, expectStatus: 200, make: () => ({ method: 'GET', path: `/api/v1/orders/${orderId}`, headers: signedHeaders(creds) }) }),
            ),
          ),
        );
        if (process.env.BENCH_PAUSE_WORKER === '1') worker?.kill('SIGCONT');
      }
    }
    const row = (name: string, rs: LoadResult[]) => `| ${name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50ms)).toFixed(2)} | ${median(rs.map((r) => r.p99ms)).toFixed(2)} | ${rs.reduce((a, r) => a + r.errors, 0)} |`;
    console.log(`\nrounds=${ROUNDS} duration=${DURATION_MS}ms concurrency=${CONCURRENCY} watcher=${WATCHER ? 'on (indexed verify)' : 'off (node reads)'}`);
    for (const side of sides) {
      const results = allResults[side.name]!;
      const cpu = cpus[side.name]!;
      console.log(`\n${side.name}${side.name === 'baseline' ? ` (${BASELINE})` : ''}:\n`);
      console.log('| workload | req/s (median) | p50 ms | p99 ms | non-expected statuses |');
      console.log('|---|---|---|---|---|');
      console.log(row(`verify, first (${WATCHER ? 'indexed read' : 'chain reads'} + claim + signature)`, results.first!));
      console.log(row('verify, repeat (stored receipt)', results.repeat!));
      console.log(row('getOrderStatus (signed GET)', results.status!));
      const ratios = (a: string) => results[a]!.map((r, k) => r.rps / results.status![k]!.rps);
      const perRound = (a: string) => median(ratios(a)).toFixed(2);
      console.log(
        `\nper round: first / getOrderStatus ${ratios('first')
          .map((x) => x.toFixed(2))
          .join(', ')}; repeat / getOrderStatus ${ratios('repeat')
          .map((x) => x.toFixed(2))
          .join(', ')}`,
      );
      console.log(`\nverify first / getOrderStatus = ${perRound('first')}; verify repeat / getOrderStatus = ${perRound('repeat')} (medians of per-round ratios)`);
      console.log('\n| workload | API process µs/req | worker µs/req | Postgres µs/req | load generator µs/req | API write syscalls/req |');
      console.log('|---|---|---|---|---|---|');
      for (const [k, cs] of Object.entries(cpu)) {
        const m = (f: (c: (typeof cs)[number]) => number) => median(cs.map(f)).toFixed(0);
        console.log(`| ${k} | ${m((c) => c.server)} | ${m((c) => c.worker)} | ${m((c) => c.postgres)} | ${m((c) => c.bench)} | ${median(cs.map((c) => c.serverWrites)).toFixed(2)} |`);
      }
      for (const [k, rs] of Object.entries(results)) for (const r of rs) if (r.errors) console.log(`${side.name} ${k}: status counts ${JSON.stringify(r.statusCounts)}`);
    }
    if (BASELINE) {
      // Per-round ratios: each pair ran back to back in the same round.
      const [a, b] = [allResults.this!, allResults.baseline!];
      const [ca, cb] = [cpus.this!, cpus.baseline!];
      console.log('\n| workload | this/baseline req/s (ratio of medians) | per-round ratios | median of per-round | API+Postgres CPU/req this/baseline |');
      console.log('|---|---|---|---|---|');
      for (const k of ['first', 'repeat', 'status']) {
        const per = a[k]!.map((r, i) => r.rps / b[k]![i]!.rps);
        const cpu = median(ca[k]!.map((c, i) => (c.server + c.postgres) / (cb[k]![i]!.server + cb[k]![i]!.postgres)));
        console.log(`| ${k} | ${(median(a[k]!.map((r) => r.rps)) / median(b[k]!.map((r) => r.rps))).toFixed(2)} | ${per.map((x) => x.toFixed(2)).join(', ')} | ${median(per).toFixed(2)} | ${cpu.toFixed(2)} |`);
      }
    }
  } finally {
    for (const side of sides) {
      await side.pgc.end().catch(() => {});
      for (const p of [side.worker, side.tg]) {
        if (!p || p.exitCode !== null) continue;
        p.kill('SIGTERM');
        await new Promise((r) => p.once('exit', r));
      }
      await side.db.drop();
    }
    await dev.stop();
  }
}

await main();
