/**
 * x402 `settle` of Tollgate's facilitator (/x402/v2, PostgreSQL, `serve --role api` in its own
 * process) against the REFERENCE x402 facilitator (bench/lib/x402-reference.ts: coinbase's
 * @x402/core x402Facilitator + @x402/evm exact scheme over viem, express, its own process), on
 * the same anvil in the same run. Each settle is a fresh EIP-3009 authorization (payers 0–6,
 * random nonces), pre-signed before the clock starts; the two facilitators send from different
 * executor keys to different payees. Two workloads, rounds interleaved (the order alternates),
 * medians reported:
 * - `sequential`: one settle at a time — the latency of a settle from request to answer;
 * - `concurrent`: BENCH_CONCURRENCY settles in flight — throughput.
 * A settle counts as done when its answer says success; afterwards each payee's on-chain balance
 * must equal its successful settles × amount (every success moved tokens exactly once).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/x402-settle.ts
 *
 * BENCH_BASELINE=<another checkout>: the second facilitator is that checkout's Tollgate instead of
 * the reference (its bench/lib/serve-unlimited.ts, its own scratch database, executor key payer 7),
 * so the ratios printed are this checkout / the baseline, from one run:
 *
 *   BENCH_BASELINE=/tmp/tg-base npx tsx bench/x402-settle.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevChain, type DevChain } from '@tollgate/devchain';
import { TestTokenArtifact } from '@tollgate/contracts';
import { createPublicClient, http, type Hex } from 'viem';
import { x402Body } from '../apps/server/test/integration/x402-fixtures.ts';
import { TEST_ADMIN_TOKEN } from '../apps/server/test/helpers/server.ts';
import { scratchDb } from './lib/db.ts';
import { cpuOfProcesses, cpuPerRequest, cpuSnapshot } from './lib/cpu.ts';
import { median } from './lib/load.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const AMOUNT = 1000n;
const BASELINE = process.env.BENCH_BASELINE;

interface Run {
  done: number;
  failed: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  reasons: Record<string, number>;
  /** CPU µs per settle answered: the facilitator's process, its database (Tollgate only), anvil. */
  cpu?: { facilitator: number; postgres: number; anvil: number };
}

/** Starts a child that prints "listening on <url>"; resolves the URL. */
async function child(script: string | URL, env: Record<string, string>): Promise<{ url: string; proc: ChildProcess }> {
  // BENCH_CPU_PROF=<dir>: V8 CPU profiles of both facilitators' processes, written when they exit.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const proc = spawn(process.execPath, [...prof, '--import', 'tsx', typeof script === 'string' ? fileURLToPath(new URL(script, import.meta.url)) : fileURLToPath(script)], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
  });
  return { url, proc };
}

/** A closed loop of `concurrency` settles for `durationMs` over pre-signed bodies. */
async function settleLoad(url: string, bodies: string[], concurrency: number, durationMs: number): Promise<Run> {
  const lat: number[] = [];
  const reasons: Record<string, number> = {};
  let next = 0;
  let done = 0;
  let failed = 0;
  const start = performance.now();
  const until = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const body = bodies[next++];
        if (!body) throw new Error('pre-signed bodies exhausted: raise the pool size');
        const t = performance.now();
        const res = await fetch(`${url}/settle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const json = (await res.json()) as { success?: boolean; errorReason?: string; error?: string };
        lat.push(performance.now() - t);
        if (res.status === 200 && json.success === true) done++;
        else {
          failed++;
          const why = `${res.status} ${json.errorReason ?? json.error ?? ''}`.slice(0, 80);
          reasons[why] = (reasons[why] ?? 0) + 1;
        }
      }
    }),
  );
  const secs = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { done, failed, rps: done / secs, p50ms: lat[Math.floor(lat.length * 0.5)] ?? 0, p99ms: lat[Math.floor(lat.length * 0.99)] ?? 0, reasons };
}

/** A merchant with a USDC receiving wallet, created through the admin API; its address. */
async function merchantWallet(url: string, chainId: number): Promise<Hex> {
  const admin = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, body: JSON.stringify(body) });
  const m = await admin('/admin/v1/merchants', { name: 'bench' });
  if (m.status !== 201) throw new Error(`create merchant: ${m.status} ${await m.text()}`);
  const address = `0x${randomBytes(20).toString('hex')}` as Hex;
  const { merchant_id } = (await m.json()) as { merchant_id: string };
  const w = await admin(`/admin/v1/merchants/${merchant_id}/wallets`, { chain_id: chainId, token_symbol: 'USDC', address });
  if (w.status !== 201) throw new Error(`add wallet: ${w.status} ${await w.text()}`);
  return address;
}

function writeConfig(dev: DevChain): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tg-bench-x402-')), 'tollgate.json');
  const tokens = dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase(), decimals: t.decimals, ...(t.symbol === 'USDC' ? { eip3009: true } : {}) }));
  writeFileSync(path, JSON.stringify({ environment: 'test', chains: [{ chain_id: dev.chainId, rpc_url: dev.rpcUrl, confirmations: 1, finality_confirmations: 1, poll_interval_ms: 1000, tokens }] }));
  return path;
}

async function main() {
  const db = await scratchDb(BASE_DB);
  const baseDb = BASELINE ? await scratchDb(BASE_DB) : undefined;
  const dev = await startDevChain({ chainId: 31337 });
  const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
  const procs: ChildProcess[] = [];
  try {
    const tollgate = await child('./lib/serve-unlimited.ts', {
      DATABASE_URL: db.url,
      TOLLGATE_CONFIG: writeConfig(dev),
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SETTLEMENT_KEY: dev.payers[8]!.privateKey,
      PORT: '0',
      LOG_LEVEL: 'warn',
    });
    procs.push(tollgate.proc);
    const reference = baseDb
      ? await child(new URL(`file://${resolve(BASELINE!, 'bench/lib/serve-unlimited.ts')}`), {
          DATABASE_URL: baseDb.url,
          TOLLGATE_CONFIG: writeConfig(dev),
          MASTER_KEY: randomBytes(32).toString('hex'),
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          SETTLEMENT_KEY: dev.payers[7]!.privateKey,
          PORT: '0',
          LOG_LEVEL: 'warn',
        })
      : await child('./lib/x402-reference.ts', { RPC_URL: dev.rpcUrl, CHAIN_ID: String(dev.chainId), KEY: dev.payers[7]!.privateKey });
    procs.push(reference.proc);
    // Tollgate settles only for its merchants' wallets (x402/scope.ts): the pay-to is one, so the
    // run includes that lookup.
    const tollgatePayTo = await merchantWallet(tollgate.url, dev.chainId);
    const targets = [
      { name: 'Tollgate /x402/v2', url: `${tollgate.url}/x402/v2`, pid: tollgate.proc.pid, payTo: tollgatePayTo, db: db.name },
      baseDb
        ? { name: 'BASELINE Tollgate /x402/v2', url: `${reference.url}/x402/v2`, pid: reference.proc.pid, payTo: await merchantWallet(reference.url, dev.chainId), db: baseDb.name }
        : { name: 'reference (@x402/core + @x402/evm)', url: reference.url, pid: reference.proc.pid, payTo: `0x${randomBytes(20).toString('hex')}` as Hex, db: undefined },
    ];
    for (const t of targets) {
      const s = (await (await fetch(`${t.url}/supported`)).json()) as { kinds: { network: string }[] };
      if (!s.kinds.some((k) => k.network === `eip155:${dev.chainId}`)) throw new Error(`${t.name} does not support the chain: ${JSON.stringify(s)}`);
    }

    let seq = 0;
    /** `n` settle bodies for a payee, signed now by payers 0–6 in turn. */
    const sign = (payTo: Hex, n: number) =>
      Promise.all(
        Array.from({ length: n }, async () => {
          const payer = dev.payers[seq++ % 7]!;
          return JSON.stringify(await x402Body({ chainId: dev.chainId, token: usdc, payTo, nowSeconds: Math.floor(Date.now() / 1000), validBefore: Math.floor(Date.now() / 1000) + 3600, payerKey: payer.privateKey, amount: AMOUNT }));
        }),
      );
    // Several times the rates measured here (anvil mines every transaction in its own block); the run stops loudly if a pool runs out.
    const pool = (c: number) => Math.ceil((DURATION_MS / 1000) * (c === 1 ? 150 : 400));

    const results: Record<string, Run[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const [mode, c] of [
        ['sequential', 1],
        ['concurrent', CONCURRENCY],
      ] as const) {
        for (const t of order) {
          const bodies = await sign(t.payTo, pool(c));
          const a = cpuSnapshot(t.pid, t.db);
          const anvilA = cpuOfProcesses('anvil');
          const r = await settleLoad(t.url, bodies, c, DURATION_MS);
          const per = cpuPerRequest(a, cpuSnapshot(t.pid, t.db), r.done + r.failed);
          r.cpu = { facilitator: per.server, postgres: t.db ? per.postgres : 0, anvil: ((cpuOfProcesses('anvil') - anvilA) * 1000) / Math.max(1, r.done + r.failed) };
          (results[`${t.name}|${mode}`] ??= []).push(r);
          console.log(`round ${round} ${mode} ${t.name}: ${r.done} settled, ${r.failed} failed, ${r.rps.toFixed(1)}/s, p50 ${r.p50ms.toFixed(1)} ms, p99 ${r.p99ms.toFixed(1)} ms${r.failed ? ` ${JSON.stringify(r.reasons)}` : ''}`);
        }
      }
    }

    // Every success moved tokens exactly once: the payee holds successes × amount.
    const client = createPublicClient({ transport: http(dev.rpcUrl) });
    for (const t of targets) {
      const successes = Object.entries(results)
        .filter(([k]) => k.startsWith(`${t.name}|`))
        .flatMap(([, rs]) => rs)
        .reduce((a, r) => a + r.done, 0);
      const bal = await client.readContract({ address: usdc, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [t.payTo] });
      console.log(`${t.name}: ${successes} successful settles, payee balance ${bal} = ${BigInt(successes) * AMOUNT} expected${bal === BigInt(successes) * AMOUNT ? '' : '  MISMATCH'}`);
    }

    console.log(`\nrounds=${ROUNDS} duration=${DURATION_MS}ms concurrency=${CONCURRENCY} (sequential: 1)\n`);
    console.log('| facilitator | workload | settles/s (median) | p50 ms | p99 ms | failed settles |');
    console.log('|---|---|---|---|---|---|');
    for (const [key, rs] of Object.entries(results)) {
      const [name, mode] = key.split('|');
      console.log(`| ${name} | ${mode} | ${median(rs.map((r) => r.rps)).toFixed(1)} | ${median(rs.map((r) => r.p50ms)).toFixed(1)} | ${median(rs.map((r) => r.p99ms)).toFixed(1)} | ${rs.reduce((a, r) => a + r.failed, 0)} |`);
    }
    console.log('\n| facilitator | workload | facilitator process µs/settle | its Postgres µs/settle | anvil µs/settle |');
    console.log('|---|---|---|---|---|');
    for (const [key, rs] of Object.entries(results)) {
      const [name, mode] = key.split('|');
      const m = (f: (c: NonNullable<Run['cpu']>) => number) => median(rs.map((r) => f(r.cpu!))).toFixed(0);
      console.log(`| ${name} | ${mode} | ${m((c) => c.facilitator)} | ${m((c) => c.postgres)} | ${m((c) => c.anvil)} |`);
    }
    for (const mode of ['sequential', 'concurrent']) {
      const tg = results[`${targets[0]!.name}|${mode}`]!;
      const ref = results[`${targets[1]!.name}|${mode}`]!;
      const ratio = (f: (r: Run) => number) => median(tg.map((r, k) => f(r) / f(ref[k]!))).toFixed(2);
      console.log(`${mode}: ${baseDb ? 'this / baseline' : 'Tollgate / reference'} throughput = ${ratio((r) => r.rps)}, p50 latency = ${ratio((r) => r.p50ms)} (medians of per-round ratios)`);
    }
  } finally {
    for (const p of procs) {
      p.kill('SIGTERM');
      await new Promise((r) => (p.exitCode === null ? p.once('exit', r) : r(null)));
    }
    await dev.stop();
    await db.drop();
    await baseDb?.drop();
  }
}

await main();
