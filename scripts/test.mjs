#!/usr/bin/env node
// Runs every test file under apps/*/test and packages/*/test with node's own test runner (Node's
// type stripping loads TypeScript). This script lists the files and picks the runner's options.
// Usage: node scripts/test.mjs [--unit] [path-filter ...]
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filters = args.filter((a) => !a.startsWith('--'));

function walk(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(walk(p));
    else if (p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const roots = [];
for (const group of ['apps', 'packages']) {
  for (const pkg of readdirSync(group)) {
    const t = join(group, pkg, 'test');
    try {
      if (statSync(t).isDirectory()) roots.push(t);
    } catch {
      /* no tests in this package */
    }
  }
}
let files = roots.flatMap(walk).sort();
if (unitOnly) files = files.filter((f) => f.includes('/unit/'));
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
// Measurements that run as tests, each with its benchmark twin in bench/, run with the long fault
// suite (`npm run test:faults`, TOLLGATE_LONG=1) or when named, not in every `npm test`:
// embedded-memory (idle RSS of `npm start`; bench/embedded-rss.ts).
const FAULTS_ONLY = ['embedded-memory'];
const named = (f) => filters.some((x) => FAULTS_ONLY.some((n) => x.includes(n) && f.includes(n)));
if (process.env.TOLLGATE_LONG !== '1') files = files.filter((f) => !FAULTS_ONLY.some((n) => f.includes(`/${n}.test.ts`)) || named(f));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// Three files at a time on two cores: part of a file's time is waiting (anvil blocks, watcher and
// page polling, child processes, the browser), which a third file fills. Not more: most files are
// busy on the CPU already (scripts/test-durations.mjs shows CPU next to wall time), and the files
// that start several gateway processes (multi-process, crash) run against fixed timeouts.
// TOLLGATE_TEST_CONCURRENCY overrides it (1 to read a file's output in order).
const concurrency = Number(process.env.TOLLGATE_TEST_CONCURRENCY) || 3;
// Besides the spec output, test-artifacts/test-durations.tsv gets each file's wall and CPU time,
// slowest first (scripts/test-probe.mjs measures each file's process; CONTRIBUTING.md, Tests).
const probeDir = join('test-artifacts', `test-probe-${process.pid}`);
// Node's on-disk compile cache (V8 code cache of every module, TypeScript included) for the test
// files and every process they start: each of ~200 test processes and their gateway and CLI
// children compiles the same module graph, ~1 CPU s per process without the cache. Inherited by
// children through the environment; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
const compileCache = process.env.NODE_COMPILE_CACHE || join(import.meta.dirname, '..', 'node_modules', '.cache', 'node-compile-cache');
mkdirSync(probeDir, { recursive: true });
const r = spawnSync(
  process.execPath,
  [
    '--import',
    join(import.meta.dirname, 'test-probe.mjs'),
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(import.meta.dirname, 'test-durations.mjs')}`,
    '--test-reporter-destination=test-artifacts/test-durations.tsv',
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, NODE_COMPILE_CACHE: compileCache, TOLLGATE_TEST_PROBE_DIR: probeDir } },
);
rmSync(probeDir, { recursive: true, force: true });
process.exit(r.status ?? 1);
