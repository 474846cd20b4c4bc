import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
    'orders/port.ts': "export interface Rail { start(orders: { rails: unknown[] }): void }\n",
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
  assert.match(r.out, /core imports a layer above it: apps\/server\/src\/orders\/service\.ts > apps\/server\/src\/settlement\/delegate\.ts/);
  assert.doesNotMatch(r.out, /orders\/routes/);
  assert.match(r.out, /0 import cycle\(s\), 0 unresolved import\(s\), 1 upward import\(s\)/);
});
