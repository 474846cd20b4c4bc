// The `tollgate` command from source (bin/tollgate.js): plain node strips our TypeScript's types, no
// loader. Stripping keeps every position, so a stack trace names our .ts lines with no source map,
// and no third-party source map is loaded either (Node would keep each for the process's life).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const SERVER = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(SERVER, 'bin', 'tollgate.js');

// Runs inside the server package (so that its dependencies resolve) as the command runs our sources.
const PROBE = `import { findSourceMap } from 'node:module';
import { createPublicClient } from 'viem';
import { PGlite } from '@electric-sql/pglite';
function fails(): never {
  throw new Error('probe');
}
let stack = '';
try {
  fails();
} catch (err) {
  stack = (err as Error).stack ?? '';
}
const has = (specifier: string) => findSourceMap(import.meta.resolve(specifier)) !== undefined;
console.log(JSON.stringify({ stack, own: findSourceMap(import.meta.url) !== undefined, viem: has('viem'), pglite: has('@electric-sql/pglite'), loaded: typeof createPublicClient === 'function' && typeof PGlite === 'function' }));
`;

describe('tollgate command from source', () => {
  it("stack traces name our .ts lines with no source map loaded, ours or node_modules'", () => {
    const dir = mkdtempSync(join(SERVER, 'test', '.probe-'));
    try {
      const file = join(dir, 'probe.ts');
      // Blank lines and a type-only block before the throw: a transform that dropped them would move
      // the frame off the throw's own line.
      const source = PROBE.replace('function fails', 'type Unused = {\n  a: string;\n};\n\n\nfunction fails');
      writeFileSync(file, source);
      const throwLine = source.split('\n').findIndex((l) => l.includes("throw new Error('probe')")) + 1;
      const run = spawnSync(process.execPath, [file], { cwd: SERVER, encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.status, 0, run.stderr);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!) as { stack: string; own: boolean; viem: boolean; pglite: boolean; loaded: boolean };
      assert.equal(out.loaded, true);
      assert.equal(out.own, false, 'no source map: stripping keeps positions');
      assert.match(out.stack, new RegExp(`probe\\.ts:${throwLine}:9\\)`), 'the frame is the TypeScript line of the throw');
      assert.equal(out.viem, false, 'viem ships a source map, and it is not loaded');
      assert.equal(out.pglite, false, 'PGlite inlines a source map, and it is not loaded');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tollgate command on a Node without type stripping', () => {
  it('says which Node it needs and how to get it, exit 1', () => {
    // Node 20 (what these machines ship) has no type stripping; `--no-experimental-strip-types` gives
    // this Node the same answer to what bin/tollgate.js asks (`process.features.typescript`).
    const run = spawnSync(process.execPath, ['--no-experimental-strip-types', BIN, 'help'], { cwd: SERVER, encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 1, run.stdout);
    assert.match(run.stderr, /needs Node\.js ≥ 22\.19 \(type stripping\); this is v\d+.*npm start/);
  });

  it('from source with type stripping, `tollgate help` prints the usage', () => {
    const run = spawnSync(process.execPath, [BIN, 'help'], { cwd: SERVER, encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /serve/);
  });
});
