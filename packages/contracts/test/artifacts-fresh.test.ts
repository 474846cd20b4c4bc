// The committed artifacts are what the pinned solc makes of the committed Solidity today: a contract
// edited without `npm run compile -w @tollgate/contracts`, or an artifact edited by hand (or by a
// formatter), fails here. The compiler is solcjs (WASM, no network): a few seconds.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { renderAll } from '../scripts/compile.ts';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

test('artifacts/ and src/artifacts/ are exactly what scripts/compile.ts makes from contracts/', () => {
  const fresh = renderAll();
  assert.ok(fresh.has('src/artifacts/TollgateSettlement.ts'), 'the settlement contract is compiled');
  const committed = ['artifacts', 'src/artifacts'].flatMap((dir) => readdirSync(join(PACKAGE_DIR, dir)).map((name) => `${dir}/${name}`)).sort();
  assert.deepEqual(committed, [...fresh.keys()].sort(), 'the same files: none missing, none stale');
  for (const [path, text] of fresh) {
    assert.ok(readFileSync(join(PACKAGE_DIR, path), 'utf8') === text, `${path} differs from the compiler's output: run npm run compile -w @tollgate/contracts and commit it`);
  }
});
