// @tollgate/mpp as a package, run as a merchant would, in child processes: after `npm ci` plain
// Node in the repository imports it (the root `prepare` built dist/); `npm pack` gives a tarball
// that installs offline into an empty folder (beside the SDK's tarball, its one dependency) and
// works there from plain Node and tsc, with the express, fastify and Hono adapters.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const PLAIN_ENV = { ...process.env, NODE_OPTIONS: '' };

const USE_MJS = `
import { tollgateMpp, tollgateMppFastify, tollgateMppHono, createMppGuard, mppReceipt } from '@tollgate/mpp';
const o = { gateway: 'http://127.0.0.1:9', merchantId: 'mer_x', route: 'GET:api:data' };
console.log(JSON.stringify({ express: tollgateMpp(o).length, fastify: typeof tollgateMppFastify(o), hono: typeof tollgateMppHono(o),
  guard: typeof createMppGuard(o).check, receipt: mppReceipt({}) ?? null }));
`;
const EXPECTED = { express: 3, fastify: 'function', hono: 'function', guard: 'function', receipt: null };

function pack(ws: string, dest: string): { tarball: string; files: string[] } {
  const r = spawnSync(NPM, ['pack', '-w', ws, '--pack-destination', dest, '--json'], { cwd: ROOT, encoding: 'utf8', env: PLAIN_ENV });
  assert.equal(r.status, 0, r.stderr);
  const info = (JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[])[0]!;
  return { tarball: join(dest, info.filename), files: info.files.map((f) => f.path) };
}

describe('@tollgate/mpp as a package', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'tollgate-mpp-pack-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('the root prepare builds it; plain node in the repository imports it', () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.match(root.scripts.prepare, /npm run build -w @tollgate\/mpp/);
    const f = join(ROOT, 'packages/mpp/.pack-test-import.mjs');
    writeFileSync(f, USE_MJS);
    try {
      const r = spawnSync(process.execPath, [f], { cwd: ROOT, encoding: 'utf8', env: PLAIN_ENV });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), EXPECTED);
    } finally {
      rmSync(f, { force: true });
    }
  });

  it('npm pack → offline install with the SDK tarball in an empty folder → plain node and tsc use it', () => {
    const sdk = pack('@tollgate/sdk', tmp);
    const mpp = pack('@tollgate/mpp', tmp);
    assert.ok(mpp.files.includes('dist/index.js') && mpp.files.includes('dist/index.d.ts') && mpp.files.includes('dist/adapters.js'), mpp.files.join('\n'));
    assert.ok(!mpp.files.some((f) => f.startsWith('src/') || f.startsWith('test/')), mpp.files.join('\n'));

    const app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'api', private: true, type: 'module' }));
    const inst = spawnSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', sdk.tarball, mpp.tarball], { cwd: app, encoding: 'utf8', env: PLAIN_ENV });
    assert.equal(inst.status, 0, inst.stderr);
    assert.ok(readdirSync(join(app, 'node_modules/@tollgate')).includes('mpp'));
    writeFileSync(join(app, 'use.mjs'), USE_MJS);
    const run = spawnSync(process.execPath, ['use.mjs'], { cwd: app, encoding: 'utf8', env: PLAIN_ENV });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), EXPECTED);

    writeFileSync(
      join(app, 'use.ts'),
      "import { createMppGuard, type TollgateMppOptions } from '@tollgate/mpp';\nconst o: TollgateMppOptions = { gateway: 'http://x', merchantId: 'm', route: 'GET:a' };\nexport const g = createMppGuard(o);\n// @ts-expect-error typed, not any\ng.check(1);\n",
    );
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'use.ts'],
      { cwd: app, encoding: 'utf8' },
    );
    assert.equal(tsc.status, 0, `${tsc.stdout}\n${tsc.stderr}`);
  });
});
