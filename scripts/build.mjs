#!/usr/bin/env node
// The compiled production build of the gateway (`npm run build` runs it after the SDK and the mpp
// middleware): `tollgate` as JavaScript that plain `node` runs, with no loader and no source
// transform at start, in apps/server/dist/ (or `--outdir DIR`, a folder inside apps/server so that
// the server's dependencies resolve from it).
//
// - esbuild bundles the server's sources and the workspace packages they import (protocol,
//   checkout-ui, portal-ui, contracts, and devchain/svm for the dev profile's own chunk) into ES
//   modules with linked source maps; third-party packages stay imports of node_modules. Code
//   splitting keeps what a command loads lazily (the gateway behind `serve`, the dev profile, the
//   Stripe adapter) in chunks of its own, so a production gateway never loads the dev profile.
// - The browser pages (hosted checkout, quick-pay, portal) are built here, once, into pages/*.json:
//   a compiled gateway serves them without esbuild (a development tool) and without the first
//   request paying for the bundling.
// - migrations/*.sql are copied beside the chunks (db/migrate.ts reads them next to itself).
// - dist/tollgate.js is the entry: it turns on source maps for our own files only, then loads the CLI.
//
// Like build-package.mjs it writes a fresh sibling folder and swaps it in, so a running process
// never sees a half-written dist/.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { tsImport } from 'tsx/esm/api';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(ROOT, 'apps', 'server');
const { values } = parseArgs({ options: { outdir: { type: 'string', default: join(SERVER, 'dist') } } });
const outdir = resolve(values.outdir);
if (relative(SERVER, outdir).startsWith('..')) throw new Error(`--outdir must be inside ${SERVER} (the server's dependencies resolve from there)`);
const fresh = `${outdir}.build-${process.pid}`;
const old = `${outdir}.old-${process.pid}`;

// Third-party imports stay imports (resolved from node_modules at run time); our workspace packages
// are bundled from their TypeScript sources (their package exports name .ts files).
const thirdPartyExternal = {
  name: 'third-party-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@tollgate/') ? undefined : { path: args.path, external: true }));
  },
};

const ENTRY_POINTS = ['apps/server/src/cli/main.ts', 'apps/server/src/db/pglite-create.ts'];

rmSync(fresh, { recursive: true, force: true });
try {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { cli: ENTRY_POINTS[0], 'pglite-create': ENTRY_POINTS[1] },
    outdir: fresh,
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
  });
  // Every package the production chunks import must be a dependency of @tollgate/server, or a
  // production install (npm ci --omit=dev -w @tollgate/server) would lack it.
  const serverPkg = JSON.parse(readFileSync(join(SERVER, 'package.json'), 'utf8'));
  const declared = new Set(Object.keys(serverPkg.dependencies ?? {}));
  const devOnly = devProfileChunks(result.metafile);
  const missing = new Set();
  for (const [file, out] of Object.entries(result.metafile.outputs)) {
    if (devOnly.has(file)) continue;
    for (const imp of out.imports) {
      if (!imp.external || imp.path.startsWith('node:')) continue;
      const name = imp.path.startsWith('@') ? imp.path.split('/').slice(0, 2).join('/') : imp.path.split('/')[0];
      if (!declared.has(name) && !(imp.kind === 'dynamic-import' && name === 'esbuild')) missing.add(`${name} (${relative(fresh, join(ROOT, file))})`);
    }
  }
  if (missing.size) throw new Error(`the compiled gateway imports packages that apps/server/package.json does not declare: ${[...missing].join(', ')}`);

  cpSync(join(SERVER, 'src', 'db', 'migrations'), join(fresh, 'migrations'), { recursive: true });
  writeFileSync(join(fresh, 'package.json'), JSON.stringify({ type: 'module', private: true }, null, 2) + '\n');
  writeFileSync(
    join(fresh, 'tollgate.js'),
    `#!/usr/bin/env node
// The compiled \`tollgate\` command (scripts/build.mjs). Source maps for our files only: Node would
// otherwise parse and keep the map of every dependency that ships one for the process's life.
// (Node >= 22.14; an older Node runs it without them.)
import * as nodeModule from 'node:module';

nodeModule.setSourceMapsSupport?.(true, { nodeModules: false, generatedCode: false });
await import('./cli.js');
`,
    { mode: 0o755 },
  );

  const pages = join(fresh, 'pages');
  mkdirSync(pages);
  const builders = {
    checkout: ['packages/checkout-ui/src/index.ts', 'buildCheckoutAssets'],
    quickpay: ['packages/checkout-ui/src/quickpay-assets.ts', 'buildQuickpayAssets'],
    portal: ['packages/portal-ui/src/index.ts', 'buildPortalAssets'],
  };
  for (const [name, [file, fn]] of Object.entries(builders)) {
    const mod = await tsImport(join(ROOT, file), import.meta.url);
    writeFileSync(join(pages, `${name}.json`), JSON.stringify(await mod[fn]()));
  }

  if (existsSync(outdir)) renameSync(outdir, old);
  mkdirSync(dirname(outdir), { recursive: true });
  renameSync(fresh, outdir);
  rmSync(old, { recursive: true, force: true });
  console.log(`compiled gateway in ${relative(ROOT, outdir) || '.'}: node ${relative(ROOT, join(outdir, 'tollgate.js'))} serve`);
} catch (err) {
  rmSync(fresh, { recursive: true, force: true });
  throw err;
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
      for (const imp of outputs[f].imports) if (!imp.external && !(skip && skip(imp))) stack.push(imp.path);
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
