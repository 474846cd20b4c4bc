/**
 * The production runtime (issue 27) in one run: the gateway from its TypeScript sources (Node 24
 * strips the types; before issue 25 this row was the tsx loader on Node 20, BENCHMARKS.md keeps
 * those figures) against the compiled build (`npm run build`, plain node) on the machine's Node and
 * on Node 24, to tell the build's share from Node's. On PostgreSQL (`serve --role api`, a configured chain whose RPC is never
 * reached, as bench/lib/gateway.ts starts it), per variant, interleaved over ROUNDS:
 *   - start-up: from spawn to the first 200 of GET /healthz, on an already migrated database
 *     (a restart) and on an empty one (the first start runs every migration);
 *   - idle RSS of `serve --role api` (/proc VmRSS) after BENCH_IDLE_MS of quiet;
 *   - createOrder/s (signed POST, 402) at BENCH_CONCURRENCY clients for BENCH_DURATION_MS.
 * And the idle RSS of the dev profile (`serve` without TOLLGATE_CONFIG: PGlite, anvil, the local
 * SVM), gateway process only, source and compiled on Node 24.
 * BENCH_ROUNDS (3), BENCH_LOAD_ROUNDS (3), BENCH_DEV_ROUNDS (2) set the repetitions.
 *
 *   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/runtime.ts
 *
 * BENCH_NODE_BEFORE (default /usr/bin/node) is the "before" Node of the compiled build; the "after"
 * Node is the `node` devDependency's binary (node_modules/.bin/node), which also runs the sources.
 *
 * BENCH_BASELINE=<another checkout, built> compares the compiled builds of that checkout and this
 * one instead (Node 24, default and with deploy/'s NODE_OPTIONS), start-up and idle RSS, same rounds:
 *
 *   BENCH_BASELINE=/work/wt/bench-base BENCH_LOAD_ROUNDS=0 npx tsx bench/runtime.ts
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signedHeaders } from '@tollgate/protocol';
import { spawnTollgate, type TollgateProcess } from '../apps/server/test/helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../apps/server/test/helpers/server.ts';
import { scratchDb } from './lib/db.ts';
import { startGateway } from './lib/gateway.ts';
import { median, runLoad } from './lib/load.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PG = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const LOAD_ROUNDS = Number(process.env.BENCH_LOAD_ROUNDS ?? 3);
const DEV_ROUNDS = Number(process.env.BENCH_DEV_ROUNDS ?? 2);
const NODE_BEFORE = process.env.BENCH_NODE_BEFORE ?? '/usr/bin/node';
const NODE_AFTER = join(ROOT, 'node_modules', '.bin', 'node');
const BASELINE = process.env.BENCH_BASELINE;

interface Variant {
  name: string;
  node: string;
  env: Record<string, string>;
  /** Another checkout's `apps/server/bin/tollgate.js` (BENCH_BASELINE); absent: this checkout's. */
  bin?: string;
}
const version = (node: string) => spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
const SOURCE = {};
const COMPILED = { NODE_ENV: 'production' };
const DEPLOY = { ...COMPILED, NODE_OPTIONS: '--max-semi-space-size=4' };
const baselineBin = BASELINE && join(BASELINE, 'apps/server/bin/tollgate.js');
const variants: Variant[] = baselineBin
  ? [
      { name: `compiled, ${version(NODE_AFTER)}, baseline checkout`, node: NODE_AFTER, env: COMPILED, bin: baselineBin },
      { name: `compiled, ${version(NODE_AFTER)}, this checkout`, node: NODE_AFTER, env: COMPILED },
      { name: `compiled, ${version(NODE_AFTER)}, --max-semi-space-size=4 [deploy/], baseline checkout`, node: NODE_AFTER, env: DEPLOY, bin: baselineBin },
      { name: `compiled, ${version(NODE_AFTER)}, --max-semi-space-size=4 [deploy/], this checkout`, node: NODE_AFTER, env: DEPLOY },
    ]
  : [
      { name: `source (type stripping), ${version(NODE_AFTER)}`, node: NODE_AFTER, env: SOURCE },
      { name: `compiled, ${version(NODE_BEFORE)}`, node: NODE_BEFORE, env: COMPILED },
      { name: `compiled, ${version(NODE_AFTER)} [after]`, node: NODE_AFTER, env: COMPILED },
      // Node 24's V8 grows the young generation to 2 × 32 MB under the start-up's allocation and keeps it
      // at idle; deploy/ caps it (NODE_OPTIONS), these rows show what that costs in createOrder/s.
      ...[4].map((mb) => ({ name: `compiled, ${version(NODE_AFTER)}, --max-semi-space-size=${mb} [deploy/]`, node: NODE_AFTER, env: { ...COMPILED, NODE_OPTIONS: `--max-semi-space-size=${mb}` } })),
    ];

const rssMb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

function apiEnv(databaseUrl: string, cfg: string, v: Variant): Record<string, string> {
  return { DATABASE_URL: databaseUrl, TOLLGATE_CONFIG: cfg, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn', ...v.env };
}

/** CPU seconds (user + system, all threads) the process has used: /proc/<pid>/stat fields 14 and 15. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/**
 * Milliseconds from spawn to the first 200 of /healthz, and the CPU time the gateway used until
 * then: on a loaded machine the wall time mostly measures the other processes, the CPU time what a
 * start costs (a quiet machine's start is close to it). Returns the running process too.
 */
async function timeToHealthy(v: Variant, databaseUrl: string, cfg: string): Promise<{ ms: number; cpu: number; tg: TollgateProcess; url: string }> {
  const t0 = performance.now();
  const tg = spawnTollgate(['serve', '--role', 'api'], apiEnv(databaseUrl, cfg, v), undefined, [], v.bin, v.node);
  const url = (await tg.waitFor(/listening on (http:\/\/\S+)/, 120_000))[1]!;
  for (;;) {
    const r = await fetch(`${url}/healthz`).catch(() => undefined);
    if (r?.status === 200) break;
    await idle(5);
  }
  return { ms: performance.now() - t0, cpu: cpuSeconds(tg.child.pid!), tg, url };
}

async function main() {
  if (!existsSync(join(ROOT, 'apps/server/dist/tollgate.js'))) throw new Error('run `npm run build` first');
  const cfg = join(mkdtempSync(join(tmpdir(), 'tg-bench-rt-')), 'tollgate.json');
  writeFileSync(
    cfg,
    JSON.stringify({
      environment: 'test',
      chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:1', tokens: [{ symbol: 'USDC', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', decimals: 6 }] }],
    }),
  );
  const restart: Record<string, number[]> = {};
  const restartCpu: Record<string, number[]> = {};
  const first: Record<string, number[]> = {};
  const rss: Record<string, number[]> = {};
  const creates: Record<string, number[]> = {};
  const devRss: Record<string, number[]> = {};
  // One migrated database per variant for the restart figure.
  const dbs = await Promise.all(variants.map(() => scratchDb(PG)));
  try {
    for (const [k, v] of variants.entries()) await (await timeToHealthy(v, dbs[k]!.url, cfg)).tg.stop();
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, in an order that rotates each round, so a slow moment of the VM is shared.
      for (let j = 0; j < variants.length; j++) {
        const k = (j + round) % variants.length;
        const v = variants[k]!;
        const fresh = await scratchDb(PG);
        try {
          const a = await timeToHealthy(v, fresh.url, cfg);
          (first[v.name] ??= []).push(a.ms);
          await a.tg.stop();
        } finally {
          await fresh.drop();
        }
        const b = await timeToHealthy(v, dbs[k]!.url, cfg);
        (restart[v.name] ??= []).push(b.ms);
        (restartCpu[v.name] ??= []).push(b.cpu * 1000);
        await idle(IDLE_MS);
        (rss[v.name] ??= []).push(rssMb(b.tg.child.pid!));
        await b.tg.stop();
      }
    }
    for (let round = 0; round < LOAD_ROUNDS; round++) {
      for (let j = 0; j < variants.length; j++) {
        const v = variants[(j + round) % variants.length]!;
        const db = await scratchDb(PG);
        const gw = await startGateway(db.url, { node: v.node, env: v.env, startTimeoutMs: 120_000, ...(v.bin ? { bin: v.bin } : {}) });
        try {
          const m = await gw.merchant('Bench');
          const run = randomBytes(3).toString('hex');
          const r = await runLoad({
            baseUrl: gw.url,
            concurrency: CONCURRENCY,
            durationMs: DURATION_MS,
            prebuild: 20_000,
            expectStatus: 402,
            make: (i) => {
              const body = { dapp_order_id: `rt-${run}-${i}`, chain_id: 31337, token_symbol: 'USDC', from_address: '0x' + '22'.repeat(20), amount_wei: String(1_000_000 + i) };
              return { method: 'POST', path: '/api/v1/orders', body: JSON.stringify(body), headers: signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body }) };
            },
          });
          if (r.errors) throw new Error(`${v.name}: ${r.errors} unexpected statuses ${JSON.stringify(r.statusCounts)}`);
          (creates[v.name] ??= []).push(r.rps);
        } finally {
          await gw.tg.stop();
          await db.drop();
        }
      }
    }
    // Dev profile: the gateway process's RSS once it printed its banner and idled.
    const devVariants = baselineBin ? [] : [variants[0]!, variants[2]!, variants[3]!];
    for (let round = 0; round < DEV_ROUNDS; round++) {
      for (const v of devVariants) {
        const dir = mkdtempSync(join(tmpdir(), 'tg-bench-dev-'));
        const tg = spawnTollgate(['serve'], { DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'warn', ...v.env }, undefined, [], undefined, v.node);
        try {
          await tg.waitFor(/Tollgate dev profile is running/, 120_000);
          await idle(IDLE_MS);
          (devRss[v.name] ??= []).push(rssMb(tg.child.pid!));
        } finally {
          await tg.stop();
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    for (const d of dbs) await d.drop();
  }
  const f = (xs: number[] | undefined, d = 0) =>
    xs
      ? `${median(xs).toFixed(d)} (${[...xs]
          .sort((a, b) => a - b)
          .map((x) => x.toFixed(d))
          .join(', ')})`
      : 'n/a';
  console.log(`\nrounds=${ROUNDS} (start, RSS) / ${LOAD_ROUNDS} (load) / ${DEV_ROUNDS} (dev profile), idle ${IDLE_MS} ms, createOrder at ${CONCURRENCY} clients for ${DURATION_MS} ms\n`);
  console.log('| variant | start to /healthz, restart (ms) | CPU time of that start (ms) | first start, migrations (ms) | idle RSS `serve --role api` (MB) | createOrder/s | idle RSS dev profile (MB) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const v of variants) console.log(`| ${v.name} | ${f(restart[v.name])} | ${f(restartCpu[v.name])} | ${f(first[v.name])} | ${f(rss[v.name])} | ${f(creates[v.name])} | ${f(devRss[v.name])} |`);
}

await main();
