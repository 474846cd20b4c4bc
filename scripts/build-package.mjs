#!/usr/bin/env node
// Builds a package's dist/ (.js + .d.ts) with tsc from its tsconfig.build.json; the package is the
// current folder (npm runs a workspace's scripts there). Used by @tollgate/sdk and @tollgate/mpp,
// run by the root `prepare` (so `npm install` / `npm ci` leave usable packages in the workspace)
// and by each package's `prepack` (so `npm pack` ships fresh code).
//
// Why not `tsc` straight into dist/: a stale file of a deleted source would be packed, and cleaning
// dist/ first leaves seconds in which a running process (a test importing `@tollgate/sdk`) finds no
// package. So tsc emits into a fresh sibling directory that then replaces dist/ by two renames.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const pkg = process.cwd();
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
