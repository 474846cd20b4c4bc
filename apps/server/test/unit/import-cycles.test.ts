import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// `npm test` runs scripts/check-cycles.mjs (npm run check:cycles) over the real sources; this proves
// the check itself fails on a cycle made only of `import type` statements, the kind a checker that
// reads compiled JavaScript (or skips type imports) never sees, and passes once the cycle is gone.
const SCRIPT = fileURLToPath(new URL('../../../../scripts/check-cycles.mjs', import.meta.url));

function run(dir: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, dir], (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr });
    });
  });
}

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cycles-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test('check:cycles fails on a cycle of type-only imports, names its files, and passes without it', async (t) => {
  const cyclic = fixture({
    'orders/service.ts': "import type { Rail } from '../rails/port.ts';\nexport interface Orders { rails: Rail[] }\n",
    'rails/port.ts': "import type { Orders } from '../orders/service.ts';\nexport interface Rail { start(orders: Orders): void }\n",
    'main.ts': "import type { Orders } from './orders/service.ts';\nexport const orders: Orders | undefined = undefined;\n",
  });
  // The same modules, the port owned by the core: one direction.
  const acyclic = fixture({
    'orders/service.ts': "import type { Rail } from './port.ts';\nexport interface Orders { rails: Rail[] }\n",
    'orders/port.ts': 'export interface Rail { start(orders: { rails: unknown[] }): void }\n',
    'rails/crypto.ts': "import type { Rail } from '../orders/port.ts';\nexport const crypto: Rail = { start() {} };\n",
    'main.ts': "import type { Orders } from './orders/service.ts';\nimport { crypto } from './rails/crypto.ts';\nexport const orders: Orders = { rails: [crypto] };\n",
  });
  t.after(() => {
    rmSync(cyclic, { recursive: true, force: true });
    rmSync(acyclic, { recursive: true, force: true });
  });
  const [bad, good] = await Promise.all([run(cyclic), run(acyclic)]);
  assert.equal(bad.code, 1, bad.out);
  assert.match(bad.out, /import cycle 1: (orders\/service\.ts > rails\/port\.ts|rails\/port\.ts > orders\/service\.ts)/);
  assert.match(bad.out, /1 import cycle\(s\)/);
  assert.equal(good.code, 0, good.out);
  assert.match(good.out, /no import cycle/);
});

test('check:cycles fails on a relative import it cannot resolve (a hole in the graph could hide a cycle)', async (t) => {
  const dir = fixture({ 'a.ts': "import type { B } from './missing.ts';\nexport type A = B;\n" });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await run(dir);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /unresolved import: \.\/missing\.ts/);
});

test('check:cycles fails when orders/ imports a layer above it (a type import too), not when its routes do', async (t) => {
  const dir = fixture({
    'apps/server/src/orders/service.ts': "import type { Plan } from '../settlement/delegate.ts';\nexport type Order = { plan?: Plan };\n",
    'apps/server/src/orders/routes/create.ts': "import { chain } from '../../chain/registry.ts';\nexport const route = chain;\n",
    'apps/server/src/settlement/delegate.ts': 'export type Plan = { flow: string };\n',
    'apps/server/src/chain/registry.ts': 'export const chain = 1;\n',
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await run(dir);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /upward import: orders\/service\.ts > settlement\/delegate\.ts \(core → plug-in\)/);
  assert.doesNotMatch(r.out, /orders\/routes/);
  assert.match(r.out, /0 import cycle\(s\), 0 unresolved import\(s\), 1 upward import\(s\), 0 file\(s\) in no layer/);
});

test('check:cycles applies the whole layer table: core → plug-in, plug-in → composition root, core → composition root; downward passes', async (t) => {
  const upward = fixture({
    // core http/ naming the portal, a plug-in naming AppDeps (deps.ts), core webhooks/ naming main.ts
    'apps/server/src/http/route.ts': "import type { PortalContext } from '../portal/http.ts';\nexport type Req = { portal: PortalContext };\n",
    'apps/server/src/portal/http.ts': 'export type PortalContext = { role: string };\n',
    'apps/server/src/quickpay/service.ts': "import type { AppDeps } from '../deps.ts';\nexport type Q = { deps: AppDeps };\n",
    'apps/server/src/deps.ts': 'export interface AppDeps { db: unknown }\n',
    'apps/server/src/webhooks/service.ts': "import { started } from '../main.ts';\nexport const w = started;\n",
    'apps/server/src/main.ts': 'export const started = true;\n',
  });
  // The same modules, every import pointing down or sideways: routes and main may import anything.
  const downward = fixture({
    'apps/server/src/http/route.ts': 'export interface RouteDeps { db: unknown }\n',
    'apps/server/src/portal/http.ts': "import type { RouteDeps } from '../http/route.ts';\nexport type PortalDeps = Pick<RouteDeps, 'db'>;\n",
    'apps/server/src/quickpay/service.ts': "import type { PortalDeps } from '../portal/http.ts';\nexport type Q = { deps: PortalDeps };\n",
    'apps/server/src/quickpay/routes/open.ts': "import type { AppDeps } from '../../deps.ts';\nimport type { Q } from '../service.ts';\nexport type R = { deps: AppDeps; q: Q };\n",
    'apps/server/src/deps.ts': "import type { RouteDeps } from './http/route.ts';\nexport interface AppDeps extends RouteDeps { extra: number }\n",
    'apps/server/src/main.ts': "import type { AppDeps } from './deps.ts';\nimport type { R } from './quickpay/routes/open.ts';\nexport const deps: AppDeps | R | undefined = undefined;\n",
  });
  t.after(() => {
    rmSync(upward, { recursive: true, force: true });
    rmSync(downward, { recursive: true, force: true });
  });
  const [bad, good] = await Promise.all([run(upward), run(downward)]);
  assert.equal(bad.code, 1, bad.out);
  assert.match(bad.out, /upward import: http\/route\.ts > portal\/http\.ts \(core → plug-in\)/);
  assert.match(bad.out, /upward import: quickpay\/service\.ts > deps\.ts \(plug-in → composition root\)/);
  assert.match(bad.out, /upward import: webhooks\/service\.ts > main\.ts \(core → composition root\)/);
  assert.match(bad.out, /3 upward import\(s\)/);
  assert.equal(good.code, 0, good.out);
  assert.match(good.out, /no import cycle and no upward import between layers \(0 tolerated\)/);
});

test('check:cycles fails on a server file no layer claims (the table must name every folder)', async (t) => {
  const dir = fixture({
    'apps/server/src/orders/service.ts': 'export const o = 1;\n',
    'apps/server/src/newthing/index.ts': "import { o } from '../orders/service.ts';\nexport const n = o;\n",
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await run(dir);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /file in no layer: newthing\/index\.ts/);
  assert.match(r.out, /1 file\(s\) in no layer/);
});

test('the allow-list tolerates a listed upward import (printed with its reason) and reports an entry that matches nothing', async () => {
  const { upwardImports, layerOf } = (await import(pathToFileURL(SCRIPT).href)) as {
    upwardImports(g: Record<string, string[]>, allowed: Record<string, string>): { upward: string[]; tolerated: string[]; unlayered: string[]; stale: string[] };
    layerOf(p: string): number | undefined;
  };
  assert.equal(layerOf('apps/server/src/orders/service.ts'), 0);
  assert.equal(layerOf('apps/server/src/orders/routes/create.ts'), 2);
  assert.equal(layerOf('apps/server/src/chain/evm/planner.ts'), 1);
  assert.equal(layerOf('packages/protocol/src/index.ts'), undefined);
  const graph = {
    'apps/server/src/http/app.ts': ['apps/server/src/hosted/routes.ts', 'apps/server/src/db/database.ts'],
    'apps/server/src/merchants/service.ts': ['apps/server/src/chain/addresses.ts'],
    'apps/server/src/hosted/routes.ts': [],
    'apps/server/src/chain/addresses.ts': [],
    'apps/server/src/db/database.ts': [],
  };
  const r = upwardImports(graph, { 'http/app.ts > hosted/routes.ts': 'pages move to the composition root next', 'fees/ledger.ts > main.ts': 'gone' });
  assert.deepEqual(r.tolerated, ['http/app.ts > hosted/routes.ts (core → plug-in): pages move to the composition root next']);
  assert.deepEqual(r.upward, ['merchants/service.ts > chain/addresses.ts (core → plug-in)']);
  assert.deepEqual(r.stale, ['fees/ledger.ts > main.ts']);
  assert.deepEqual(r.unlayered, []);
});
