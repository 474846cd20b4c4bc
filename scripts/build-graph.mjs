// The compiled gateway's module graph (scripts/build.mjs) and the rules it must keep; shared with
// apps/server/test/unit/production-graph.test.ts, which bundles the same way without writing.
//
// - Every third-party package a production chunk imports is a dependency of @tollgate/server, or a
//   production install (npm ci --omit=dev -w @tollgate/server) would lack it.
// - Development-only packages stay out of the production graph: the local chain (@tollgate/devchain,
//   anvil), the local SVM (@tollgate/svm, litesvm), tsx and esbuild. The dev profile (apps/server/src/
//   dev/profile.ts, loaded dynamically by `serve` with profile dev) may use them: its chunks are not
//   production chunks. The one exception is checkout-ui's page builder, which imports esbuild
//   dynamically only when no pre-built page exists (never in the compiled build: pages/*.json).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SERVER = join(ROOT, 'apps', 'server');
const ENTRY_POINTS = ['apps/server/src/cli/main.ts', 'apps/server/src/db/pglite-create.ts'];

/** Packages (and workspace folders) a production chunk must never contain or import. */
export const DEV_ONLY_PACKAGES = ['@tollgate/devchain', '@tollgate/svm', '@foundry-rs/anvil', 'litesvm', 'tsx', 'esbuild'];
const DEV_ONLY_SOURCES = ['packages/devchain/', 'packages/svm/'];

// Third-party imports stay imports (resolved from node_modules at run time); our workspace packages
// are bundled from their TypeScript sources (their package exports name .ts files).
// Except BUNDLED: viem (with the packages it is built on) and TypeBox are ES modules published as
// hundreds of files behind one index. Imported from node_modules, Node loads every file of the index
// (354 viem modules, 247 TypeBox ones, the bip39 word lists of every language) and keeps each
// one's source, code and module record: bundled, esbuild keeps only what the gateway uses (idle RSS
// of `serve --role api`, issue 27; BENCHMARKS.md). All are ESM with `sideEffects: false`, and no
// package left external imports them (two copies would break their `instanceof` checks).
const BUNDLED = ['viem', 'ox', 'abitype', '@noble/hashes', '@noble/curves', '@scure/bip32', '@scure/bip39', '@scure/base', '@sinclair/typebox'];
const thirdPartyExternal = {
  name: 'third-party-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@tollgate/') || BUNDLED.includes(packageOf(args.path)) ? undefined : { path: args.path, external: true }));
  },
};

/** esbuild's options for the compiled gateway, written to `outdir` (or kept in memory with write: false). */
export function bundleOptions(outdir) {
  return {
    absWorkingDir: ROOT,
    entryPoints: { cli: ENTRY_POINTS[0], 'pglite-create': ENTRY_POINTS[1] },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    // Stack traces name our .ts files and lines; the maps point at the sources rather than embedding
    // them (a smaller map for Node to parse at start).
    sourcemap: 'linked',
    sourcesContent: false,
    conditions: ['tollgate-source'],
    define: { TOLLGATE_PAGES_DIR: '"./pages"' },
    plugins: [thirdPartyExternal],
    metafile: true,
    logLevel: 'warning',
  };
}

const packageOf = (path) => (path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0]);

/**
 * What breaks the rules above in an esbuild metafile, one sentence each (empty when none).
 * `declared`: the dependency names of apps/server/package.json.
 */
export function productionGraphProblems(metafile, declared = serverDependencies()) {
  const devOnly = devProfileChunks(metafile);
  const problems = new Set();
  for (const [file, out] of Object.entries(metafile.outputs)) {
    if (devOnly.has(file) || file.endsWith('.map')) continue;
    for (const input of Object.keys(out.inputs ?? {})) {
      const dev = DEV_ONLY_SOURCES.find((d) => input.includes(d));
      if (dev) problems.add(`${file} contains ${input}: ${dev} is development-only`);
    }
    for (const imp of out.imports) {
      if (!imp.external || imp.path.startsWith('node:')) continue;
      const name = packageOf(imp.path);
      if (imp.kind === 'dynamic-import' && name === 'esbuild') continue;
      if (DEV_ONLY_PACKAGES.includes(name)) problems.add(`${file} imports ${name}, a development-only package`);
      else if (!declared.has(name) && !bundledDependencies().has(name)) problems.add(`${file} imports ${name}, which apps/server/package.json does not declare`);
    }
  }
  return [...problems];
}

/**
 * The dependencies of the bundled packages (BUNDLED), which a chunk may import (viem's WebSocket
 * transport imports isows on use): a production install has them, as viem's own dependencies.
 */
let bundledDeps;
function bundledDependencies() {
  if (bundledDeps) return bundledDeps;
  bundledDeps = new Set();
  for (const name of BUNDLED) {
    const file = join(ROOT, 'node_modules', name, 'package.json');
    for (const d of Object.keys(JSON.parse(readFileSync(file, 'utf8')).dependencies ?? {})) bundledDeps.add(d);
  }
  return bundledDeps;
}

/** The `dependencies` of apps/server/package.json (what a production install has). */
export function serverDependencies() {
  return new Set(Object.keys(JSON.parse(readFileSync(join(SERVER, 'package.json'), 'utf8')).dependencies ?? {}));
}

/** Output files reachable only through the dev profile (dev/profile.ts's dynamic import). */
function devProfileChunks(metafile) {
  const outputs = metafile.outputs;
  const reach = (start, skip) => {
    const seen = new Set();
    const stack = [start];
    while (stack.length) {
      const f = stack.pop();
      if (seen.has(f) || !outputs[f]) continue;
      seen.add(f);
      for (const imp of outputs[f].imports) if (!imp.external && !skip?.(imp)) stack.push(imp.path);
    }
    return seen;
  };
  // esbuild names the target of every dynamic import an entry point too: start from the two real ones.
  const entries = Object.keys(outputs).filter((f) => ENTRY_POINTS.includes(outputs[f].entryPoint));
  const isDevChunk = (f) => Object.keys(outputs[f]?.inputs ?? {}).some((i) => i.endsWith('apps/server/src/dev/profile.ts'));
  const prod = new Set();
  for (const e of entries) for (const f of reach(e, (imp) => isDevChunk(imp.path))) prod.add(f);
  return new Set(Object.keys(outputs).filter((f) => !prod.has(f)));
}
