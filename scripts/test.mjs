#!/usr/bin/env node
// Runs every test file under apps/*/test and packages/*/test with node's own test runner (tsx loads
// TypeScript). Node 20's `--test` does not expand globs, so this script lists the files.
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
    try { if (statSync(t).isDirectory()) roots.push(t); } catch { /* no tests in this package */ }
  }
}
let files = roots.flatMap(walk).sort();
if (unitOnly) files = files.filter((f) => f.includes('/unit/'));
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
if (files.length === 0) { console.error('no test files matched'); process.exit(1); }

// Two cores: integration files each start a database (and often anvil); run two at a time.
// Besides the spec output, test-artifacts/test-durations.tsv gets each file's wall and CPU time,
// slowest first (scripts/test-probe.mjs measures each file's process; CONTRIBUTING.md, Tests).
const probeDir = join('test-artifacts', `test-probe-${process.pid}`);
mkdirSync(probeDir, { recursive: true });
const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', join(import.meta.dirname, 'test-probe.mjs'),
  '--test', '--test-concurrency=2',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  `--test-reporter=${join(import.meta.dirname, 'test-durations.mjs')}`, '--test-reporter-destination=test-artifacts/test-durations.tsv',
  ...files], { stdio: 'inherit', env: { ...process.env, TOLLGATE_TEST_PROBE_DIR: probeDir } });
rmSync(probeDir, { recursive: true, force: true });
process.exit(r.status ?? 1);
