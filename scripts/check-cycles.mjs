#!/usr/bin/env node
// Fails on any import cycle between our source files (apps/*/src, packages/*/src), type-only
// imports included, and on any import from the core orders/ into a layer above it: a type import still ties the two modules' designs together, and the layers in
// CONTRIBUTING.md ("Dependency direction") only hold if nothing below imports anything above.
// Run by `npm test` (npm run check:cycles) before the tests; test/unit/import-cycles.test.ts proves
// it reports a type-only cycle.
// Usage: node scripts/check-cycles.mjs [dir ...]   (default: every apps/*/src and packages/*/src)
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Every apps/<x>/src and packages/<x>/src of the repository. */
export function sourceRoots(root = ROOT) {
  const dirs = [];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const src = join(root, group, name, 'src');
      if (existsSync(src)) dirs.push(src);
    }
  }
  return dirs;
}

/**
 * The import cycles among the .ts/.tsx files under `dirs` (each cycle a list of paths relative to
 * their common base), and the relative imports that could not be resolved (a graph with holes
 * would hide cycles). Imports of packages (node_modules, our workspaces by name) are not followed.
 */
export async function findCycles(dirs, { tsConfig = join(ROOT, 'tsconfig.json') } = {}) {
  const result = await madge(dirs, {
    fileExtensions: ['ts', 'tsx'],
    tsConfig,
    // Explicit, so a change of default can never silently drop `import type` edges.
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false }, es6: { skipTypeImports: false } },
  });
  const unresolved = result.warnings().skipped.filter((s) => s.startsWith('.') || s.startsWith('/'));
  return { cycles: result.circular(), unresolved, upward: upwardImports(result.obj()) };
}

// The core's rule (CONTRIBUTING.md, "Dependency direction"): orders/ (its routes apart, which
// belong to the composition root) imports no plug-in and nothing of the composition root.
const CORE = /(^|\/)apps\/server\/src\/orders\/(?!routes\/)/;
const ABOVE_CORE = /(^|\/)apps\/server\/src\/((chain|settlement|quickpay|checkout|mpp|x402|rails|portal|hosted)\/|(deps|main|routes|workers)\.ts$)/;

/** Imports from the core into a layer above it, as "from > to". */
export function upwardImports(graph) {
  const out = [];
  for (const [from, tos] of Object.entries(graph)) {
    if (!CORE.test(from)) continue;
    for (const to of tos) if (ABOVE_CORE.test(to)) out.push(`${from} > ${to}`);
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const dirs = args.length ? args.map((a) => resolve(a)) : sourceRoots();
  const started = Date.now();
  const { cycles, unresolved, upward } = await findCycles(dirs);
  for (const [i, cycle] of cycles.entries()) console.error(`import cycle ${i + 1}: ${cycle.join(' > ')} > ${cycle[0]}`);
  for (const s of unresolved) console.error(`unresolved import: ${s}`);
  for (const s of upward) console.error(`core imports a layer above it: ${s}`);
  if (cycles.length || unresolved.length || upward.length) {
    console.error(`check:cycles: ${cycles.length} import cycle(s), ${unresolved.length} unresolved import(s), ${upward.length} upward import(s); see CONTRIBUTING.md, "Dependency direction"`);
    process.exit(1);
  }
  console.log(`check:cycles: no import cycle and no upward import from orders/ in ${dirs.length} source folders (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
