#!/usr/bin/env node
// Builds dist/ (.js + .d.ts) with tsc. Run by the root `prepare` (so `npm install` / `npm ci` leave
// a usable `@tollgate/sdk` in the workspace) and by `prepack` (so `npm pack` ships fresh code).
//
// Why not `tsc` straight into dist/: a stale file of a deleted source would be packed, and cleaning
// dist/ first leaves seconds in which a running process (a test importing `@tollgate/sdk`) finds no
// package. So tsc emits into a fresh sibling directory that then replaces dist/ by two renames.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(join(pkg, 'package.json')).resolve('typescript/bin/tsc');
const fresh = join(pkg, `dist.build-${process.pid}`);
const old = join(pkg, `dist.old-${process.pid}`);
const dist = join(pkg, 'dist');

const r = spawnSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.build.json'), '--outDir', fresh], { stdio: 'inherit' });
if (r.status !== 0) {
  rmSync(fresh, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}
if (existsSync(dist)) renameSync(dist, old);
renameSync(fresh, dist);
rmSync(old, { recursive: true, force: true });
