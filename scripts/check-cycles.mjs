#!/usr/bin/env node
// Fails on any import cycle between our source files (apps/*/src, packages/*/src), type-only
// imports included, and on any import of the server from a lower layer into a higher one
// (LAYERS below: core → plug-ins → composition root, CONTRIBUTING.md "Dependency direction"): a
// type import still ties the two modules' designs together, and the layers only hold if nothing
// below imports anything above. Run by `npm test` (npm run check:cycles) before the tests;
// test/unit/import-cycles.test.ts proves it reports a type-only cycle and every kind of upward import.
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
  return { cycles: result.circular(), unresolved, ...upwardImports(result.obj()) };
}

// The layers of the server (CONTRIBUTING.md, "Dependency direction"), lowest first, by path under
// apps/server/src/. A module imports only from its own layer or a lower one. Every file must fall
// in a layer: a new folder fails the check until it is placed here, so the table stays complete.
export const LAYERS = [
  {
    name: 'core',
    test: /^((orders|fees|webhooks|db|http|merchants|config|signers)\/|(clock|log|workers)\.ts$)/,
  },
  {
    name: 'plug-in',
    test: /^(chain|rails|refunds|mpp|x402|settlement|checkout|quickpay|portal|hosted|metrics)\//,
  },
  {
    // Every module's routes/ folder belongs here: routes receive AppDeps from routes.ts.
    name: 'composition root',
    test: /^((main|routes|deps|roles|http-plugins)\.ts$|(cli|dev|ops)\/|(.+\/)?routes\/)/,
  },
];

/**
 * Upward imports tolerated for now, each with the reason it is not fixed yet. The check prints
 * them on every run; an entry that no longer matches an import fails the check (remove it).
 * Keys are "from > to", paths under apps/server/src/.
 */
export const ALLOWED_UPWARD = {};

const SERVER = /(^|\/)apps\/server\/src\/(.+)$/;

/** The layer index of a server source path (0 = core), -1 when no layer claims it, undefined outside the server. */
export function layerOf(path) {
  const m = SERVER.exec(path);
  if (!m) return undefined;
  const rel = m[2];
  // routes/ folders first: orders/routes/x.ts is the composition root's, not the core's.
  for (let i = LAYERS.length - 1; i >= 0; i--) if (LAYERS[i].test.test(rel)) return i;
  return -1;
}

/**
 * Imports from a lower layer into a higher one, as "from > to" (server-relative paths), split into
 * those the allow-list tolerates and the rest; server files no layer claims; and allow-list entries
 * that match no import any more.
 */
export function upwardImports(graph, allowed = ALLOWED_UPWARD) {
  const upward = [];
  const tolerated = [];
  const unlayered = new Set();
  const rel = (p) => SERVER.exec(p)[2];
  for (const [from, tos] of Object.entries(graph)) {
    const lf = layerOf(from);
    if (lf === undefined) continue;
    if (lf === -1) unlayered.add(rel(from));
    for (const to of tos) {
      const lt = layerOf(to);
      if (lt === undefined) continue;
      if (lt === -1) unlayered.add(rel(to));
      if (lf === -1 || lt === -1 || lt <= lf) continue;
      const edge = `${rel(from)} > ${rel(to)}`;
      const line = `${edge} (${LAYERS[lf].name} → ${LAYERS[lt].name})`;
      if (Object.hasOwn(allowed, edge)) tolerated.push(`${line}: ${allowed[edge]}`);
      else upward.push(line);
    }
  }
  const seen = new Set(tolerated.map((t) => t.slice(0, t.indexOf(' ('))));
  const stale = Object.keys(allowed).filter((k) => !seen.has(k));
  return { upward: upward.sort(), tolerated: tolerated.sort(), unlayered: [...unlayered].sort(), stale };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const dirs = args.length ? args.map((a) => resolve(a)) : sourceRoots();
  const started = Date.now();
  const { cycles, unresolved, upward, tolerated, unlayered, stale } = await findCycles(dirs);
  for (const [i, cycle] of cycles.entries()) console.error(`import cycle ${i + 1}: ${cycle.join(' > ')} > ${cycle[0]}`);
  for (const s of unresolved) console.error(`unresolved import: ${s}`);
  for (const s of upward) console.error(`upward import: ${s}`);
  for (const s of unlayered) console.error(`file in no layer: ${s} (add its folder to LAYERS in scripts/check-cycles.mjs)`);
  for (const s of stale) console.error(`allow-list entry matches no import any more (remove it): ${s}`);
  for (const s of tolerated) console.warn(`tolerated upward import (temporary): ${s}`);
  const problems = cycles.length + unresolved.length + upward.length + unlayered.length + stale.length;
  if (problems) {
    console.error(
      `check:cycles: ${cycles.length} import cycle(s), ${unresolved.length} unresolved import(s), ${upward.length} upward import(s), ${unlayered.length} file(s) in no layer, ${stale.length} stale allow-list entr(ies); see CONTRIBUTING.md, "Dependency direction"`,
    );
    process.exit(1);
  }
  console.log(`check:cycles: no import cycle and no upward import between layers (${tolerated.length} tolerated) in ${dirs.length} source folders (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
