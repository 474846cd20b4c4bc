/**
 * The footprint of the embedded default: `tollgate serve` started the way `npm start` starts it
 * (dev profile: PGlite in a fresh DATA_DIR, a local anvil chain, the demo merchant), measured from
 * /proc while idle and again after a createOrder load, with the createOrder rate of that load.
 * With BENCH_DATABASE_URL the same dev profile also runs on a scratch Postgres database
 * (DATABASE_URL), and with BENCH_BASELINE=<another checkout> every configuration also runs that
 * checkout's `apps/server/bin/tollgate.js`, interleaved, so before/after ratios come from one run.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test BENCH_BASELINE=/tmp/tg-base \
 *     npx tsx bench/embedded-rss.ts
 *
 * The gateway runs with `--import bench/lib/memory-probe.mjs`, which prints process.memoryUsage()
 * and smaps_rollup on SIGUSR2: RSS is split into V8 heap, external (PGlite's WebAssembly memory is
 * counted there) and the rest without changing the gateway.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signedHeaders } from '@tollgate/protocol';
import { spawnTollgate, type TollgateProcess } from '../apps/server/test/helpers/process.ts';
import { cpuPerRequest, cpuSnapshot, type CpuReading } from './lib/cpu.ts';
import { scratchDb } from './lib/db.ts';
import { median, runLoad, type LoadResult } from './lib/load.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PG_URL = process.env.BENCH_DATABASE_URL;
const BASELINE = process.env.BENCH_BASELINE;
const PROBE = fileURLToPath(new URL('./lib/memory-probe.mjs', import.meta.url));

interface Side {
  name: string;
  bin: string | undefined;
}
type Backend = 'pglite' | 'postgres';

/** One reading of the gateway process (MB) and of the dev chain beside it. */
interface Reading {
  rss: number;
  hwm: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  anon: number;
  file: number;
  anvilRss: number;
}

interface Sample {
  startS: number;
  idle: Reading;
  loaded: Reading;
  load: LoadResult;
  /** The gateway's CPU µs per order during the load: with PGlite that is all the database's work
   * too, and unlike the rate it hardly moves when other jobs share the machine. */
  cpuUs: number;
}

const MB = 1024 * 1024;

function statusKb(pid: number, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** Direct children of `pid` whose command line contains `name` (anvil, started by the dev profile). */
function childPids(pid: number, name: string): number[] {
  const out: number[] = [];
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    let kids = '';
    try {
      kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const k of kids.split(' ').filter(Boolean).map(Number)) {
      try {
        if (readFileSync(`/proc/${k}/cmdline`, 'utf8').includes(name)) out.push(k);
      } catch {
        // exited meanwhile
      }
    }
  }
  return out;
}

async function probe(tg: TollgateProcess): Promise<{ heapUsed: number; external: number; arrayBuffers: number; rollup: Record<string, number> }> {
  const seen = tg.output().split('MEMPROBE ').length;
  tg.child.kill('SIGUSR2');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const parts = tg.output().split('MEMPROBE ');
    if (parts.length > seen && parts[seen]!.includes('\n')) return JSON.parse(parts[seen]!.slice(0, parts[seen]!.indexOf('\n')));
    if (Date.now() > deadline) throw new Error('no MEMPROBE answer in 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function read(tg: TollgateProcess): Promise<Reading> {
  const pid = tg.child.pid!;
  const p = await probe(tg);
  const anvil = childPids(pid, 'anvil').reduce((a, k) => a + statusKb(k, 'VmRSS'), 0);
  return {
    rss: statusKb(pid, 'VmRSS') / 1024,
    hwm: statusKb(pid, 'VmHWM') / 1024,
    heapUsed: p.heapUsed / MB,
    external: p.external / MB,
    arrayBuffers: p.arrayBuffers / MB,
    anon: (p.rollup.Anonymous ?? NaN) / 1024,
    file: ((p.rollup.Rss ?? NaN) - (p.rollup.Anonymous ?? NaN)) / 1024,
    anvilRss: anvil / 1024,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runOnce(side: Side, backend: Backend): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-rss-'));
  const scratch = backend === 'postgres' ? await scratchDb(PG_URL!) : undefined;
  const env: Record<string, string> = { DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'warn', ...(scratch ? { DATABASE_URL: scratch.url, MASTER_KEY: randomBytes(32).toString('hex') } : {}) };
  const t0 = Date.now();
  const tg = spawnTollgate(['serve'], env, undefined, ['--import', PROBE], side.bin);
  try {
    await tg.waitFor(/payer private key/, 180_000);
    const startS = (Date.now() - t0) / 1000;
    const text = tg.output();
    const field = (re: RegExp) =>
      re.exec(text)?.[1] ??
      (() => {
        throw new Error(`${re} not printed:\n${text}`);
      })();
    const url = field(/API base URL\s+(\S+)/);
    const creds = { apiKey: field(/demo API key\s+(\S+)/), apiSecret: field(/demo API secret\s+(\S+)/) };
    const admin = field(/admin token\s+(\S+)/);
    await sleep(IDLE_MS);
    const idle = await read(tg);
    // The demo merchant's 100.00 of fees would run out under load: enough for any run.
    const top = await fetch(`${url}/admin/v1/merchants/demo/fee-balance/top-ups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '10000000' }),
    });
    if (top.status !== 200) throw new Error(`top-up: ${top.status} ${await top.text()}`);
    let seq = 0;
    let a: CpuReading | undefined;
    let b: CpuReading | undefined;
    const run = `${side.name}-${backend}-${t0}`;
    const load = await runLoad({
      baseUrl: url,
      concurrency: CONCURRENCY,
      durationMs: DURATION_MS,
      prebuild: 20_000,
      expectStatus: 402,
      onStart: () => (a = cpuSnapshot(tg.child.pid)),
      onEnd: () => (b = cpuSnapshot(tg.child.pid)),
      make: () => {
        const k = ++seq;
        const body = { dapp_order_id: `rss-${run}-${k}`, chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: String(1_000_000 + k) };
        return { method: 'POST', path: '/api/v1/orders', body: JSON.stringify(body), headers: signedHeaders({ ...creds, body }) };
      },
    });
    await sleep(2000);
    const loaded = await read(tg);
    return { startS, idle, loaded, load, cpuUs: cpuPerRequest(a!, b!, load.requests).server };
  } finally {
    await tg.stop('SIGINT');
    await tg.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    await scratch?.drop();
  }
}

async function main() {
  const sides: Side[] = [{ name: 'this', bin: undefined }];
  if (BASELINE) sides.push({ name: 'baseline', bin: resolve(BASELINE, 'apps/server/bin/tollgate.js') });
  const backends: Backend[] = PG_URL ? ['pglite', 'postgres'] : ['pglite'];
  const samples = new Map<string, Sample[]>();
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which side goes first, so neither always meets the warmer machine.
    const order = round % 2 ? [...sides].reverse() : sides;
    for (const backend of backends) {
      for (const side of order) {
        const s = await runOnce(side, backend);
        const key = `${side.name}/${backend}`;
        (samples.get(key) ?? samples.set(key, []).get(key)!).push(s);
        console.error(
          `round ${round + 1} ${key}: start ${s.startS.toFixed(1)} s, idle RSS ${s.idle.rss.toFixed(0)} MB (peak ${s.idle.hwm.toFixed(0)}), loaded ${s.loaded.rss.toFixed(0)} MB, ${s.load.rps.toFixed(0)} orders/s, ${s.cpuUs.toFixed(0)} µs CPU/order, ${s.load.errors} unexpected`,
        );
      }
    }
  }
  const med = (xs: Sample[], f: (s: Sample) => number) => median(xs.map(f));
  const f0 = (n: number) => n.toFixed(0);
  console.log(`\nrounds=${ROUNDS} idle=${IDLE_MS}ms load=${DURATION_MS}ms x ${CONCURRENCY} clients; MB, medians\n`);
  console.log('| side / database | start s | idle RSS | idle peak (HWM) | V8 heap used | external | arrayBuffers | anonymous | file-backed | anvil RSS | createOrder/s | p50 ms | gateway CPU µs/order | RSS after load | peak after load | unexpected |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [key, xs] of samples) {
    console.log(
      `| ${key} | ${med(xs, (s) => s.startS).toFixed(1)} | **${f0(med(xs, (s) => s.idle.rss))}** | ${f0(med(xs, (s) => s.idle.hwm))} | ${f0(med(xs, (s) => s.idle.heapUsed))} | ${f0(med(xs, (s) => s.idle.external))} | ${f0(med(xs, (s) => s.idle.arrayBuffers))} | ${f0(med(xs, (s) => s.idle.anon))} | ${f0(med(xs, (s) => s.idle.file))} | ${f0(med(xs, (s) => s.idle.anvilRss))} | **${f0(med(xs, (s) => s.load.rps))}** | ${med(xs, (s) => s.load.p50ms).toFixed(2)} | ${f0(med(xs, (s) => s.cpuUs))} | **${f0(med(xs, (s) => s.loaded.rss))}** | ${f0(med(xs, (s) => s.loaded.hwm))} | ${xs.reduce((a, s) => a + s.load.errors, 0)} |`,
    );
  }
  if (BASELINE) {
    console.log('\n| database | idle RSS this/baseline | RSS after load this/baseline | createOrder/s this/baseline | gateway CPU per order this/baseline |');
    console.log('|---|---|---|---|---|');
    for (const backend of backends) {
      const a = samples.get(`this/${backend}`)!;
      const b = samples.get(`baseline/${backend}`)!;
      // Per-round ratios: each pair ran back to back.
      const ratio = (f: (s: Sample) => number) => median(a.map((s, k) => f(s) / f(b[k]!))).toFixed(2);
      console.log(`| ${backend} | ${ratio((s) => s.idle.rss)} | ${ratio((s) => s.loaded.rss)} | ${ratio((s) => s.load.rps)} | ${ratio((s) => s.cpuUs)} |`);
    }
  }
}

await main();
