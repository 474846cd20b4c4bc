#!/usr/bin/env node
// The compiled production build of the gateway (`npm run build` runs it after the SDK and the mpp
// middleware): `tollgate` as JavaScript that plain `node` runs, with no loader and no source
// transform at start, in apps/server/dist/ (or `--outdir DIR`, a folder inside apps/server so that
// the server's dependencies resolve from it).
//
// - esbuild bundles the server's sources and the workspace packages they import (protocol,
//   checkout-ui, portal-ui, contracts, and devchain/svm for the dev profile's own chunk) into ES
//   modules with linked source maps; third-party packages stay imports of node_modules, except
//   viem and TypeBox (build-graph.mjs BUNDLED: only the parts the gateway uses are loaded). Code
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
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { tsImport } from 'tsx/esm/api';
import { bundleOptions, productionGraphProblems, ROOT, SERVER } from './build-graph.mjs';

const { values } = parseArgs({ options: { outdir: { type: 'string', default: join(SERVER, 'dist') } } });
const outdir = resolve(values.outdir);
if (relative(SERVER, outdir).startsWith('..')) throw new Error(`--outdir must be inside ${SERVER} (the server's dependencies resolve from there)`);
const fresh = `${outdir}.build-${process.pid}`;
const old = `${outdir}.old-${process.pid}`;

rmSync(fresh, { recursive: true, force: true });
try {
  const result = await build(bundleOptions(fresh));
  const problems = productionGraphProblems(result.metafile);
  if (problems.length) throw new Error(`the compiled gateway's production graph:\n${problems.join('\n')}`);

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
