// The `tollgate` command's loaders (bin/register.mjs): tsx runs our TypeScript with its source maps,
// so a stack trace points at our .ts lines; the source maps of third-party modules are not loaded
// (bin/third-party-source-maps.mjs), because Node would keep all of them for the process's life.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const SERVER = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER = join(SERVER, 'bin', 'register.mjs');

// Runs inside the server package (so that its dependencies resolve) under the command's loaders.
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

describe('tollgate command loaders', () => {
  it('keeps our source maps (stack traces name .ts lines) and drops those of node_modules', () => {
    const dir = mkdtempSync(join(SERVER, 'test', '.probe-'));
    try {
      const file = join(dir, 'probe.ts');
      // Blank lines and a type-only block before the throw: tsx's output has fewer lines, so only a
      // source map puts the frame on the throw's own line.
      const source = PROBE.replace('function fails', 'type Unused = {\n  a: string;\n};\n\n\nfunction fails');
      writeFileSync(file, source);
      const throwLine = source.split('\n').findIndex((l) => l.includes("throw new Error('probe')")) + 1;
      const run = spawnSync(process.execPath, ['--import', REGISTER, file], { cwd: SERVER, encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.status, 0, run.stderr);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!) as { stack: string; own: boolean; viem: boolean; pglite: boolean; loaded: boolean };
      assert.equal(out.loaded, true);
      assert.equal(out.own, true, 'our module has its source map');
      assert.match(out.stack, new RegExp(`probe\\.ts:${throwLine}:9\\)`), 'the frame is the TypeScript line of the throw');
      assert.equal(out.viem, false, 'viem ships a source map, and it is not loaded');
      assert.equal(out.pglite, false, 'PGlite inlines a source map, and it is not loaded');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
