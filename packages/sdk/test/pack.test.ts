// The README's promises about the SDK as a package, run as a user would, in child processes:
//  - right after `npm install` / `npm ci` (the root `prepare` builds dist/), plain Node in the
//    repository imports `@tollgate/sdk` (no tsx, no build step by hand);
//  - `npm pack -w @tollgate/sdk` (its `prepack` builds) gives a tarball that installs offline into
//    an empty folder and works there from plain Node, with its type declarations.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// Plain Node: no tsx loader inherited from the test runner.
const PLAIN_ENV = { ...process.env, NODE_OPTIONS: '' };

const USE_MJS = `
import { TollgateClient, TollgateApiError, verifyWebhook } from '@tollgate/sdk';
const c = new TollgateClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' });
console.log(JSON.stringify({ client: typeof c.createOrder, apiError: typeof TollgateApiError, verify: typeof verifyWebhook }));
`;

describe('@tollgate/sdk as a package', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'tollgate-sdk-pack-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('the root package builds the SDK on install (prepare) and packs it with a fresh build (prepack)', () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.match(root.scripts.prepare, /npm run build -w @tollgate\/sdk/);
    const sdk = JSON.parse(readFileSync(join(ROOT, 'packages/sdk/package.json'), 'utf8'));
    assert.equal(sdk.scripts.prepack, 'npm run build');
    // Bundlers resolve the `development` condition in dev builds: it must not point at sources
    // that the tarball does not contain.
    assert.equal(sdk.exports['.'].development, undefined);
  });

  it('plain node in the repository imports @tollgate/sdk (the README example line)', () => {
    writeFileSync(join(ROOT, 'packages/sdk/.pack-test-import.mjs'), USE_MJS);
    try {
      const r = spawnSync(process.execPath, ['packages/sdk/.pack-test-import.mjs'], { cwd: ROOT, encoding: 'utf8', env: PLAIN_ENV });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { client: 'function', apiError: 'function', verify: 'function' });
    } finally {
      rmSync(join(ROOT, 'packages/sdk/.pack-test-import.mjs'), { force: true });
    }
  });

  it('npm pack -w @tollgate/sdk → npm install <tarball> (offline) in an empty folder → plain node and tsc use it', () => {
    const pack = spawnSync(NPM, ['pack', '-w', '@tollgate/sdk', '--pack-destination', tmp, '--json'], { cwd: ROOT, encoding: 'utf8', env: PLAIN_ENV });
    assert.equal(pack.status, 0, pack.stderr);
    const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, pack.stdout);
    const files = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    assert.ok(files.includes('dist/sdk/src/index.js') && files.includes('dist/sdk/src/index.d.ts'), files.join('\n'));
    assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('scripts/')), files.join('\n'));

    const app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
    const inst = spawnSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', join(tmp, tarball)], { cwd: app, encoding: 'utf8', env: PLAIN_ENV });
    assert.equal(inst.status, 0, inst.stderr);
    writeFileSync(join(app, 'use.mjs'), USE_MJS);
    const run = spawnSync(process.execPath, ['use.mjs'], { cwd: app, encoding: 'utf8', env: PLAIN_ENV });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { client: 'function', apiError: 'function', verify: 'function' });

    writeFileSync(join(app, 'use.ts'), "import { TollgateClient } from '@tollgate/sdk';\nexport const c: TollgateClient = new TollgateClient({ baseUrl: 'http://x', apiKey: 'k', apiSecret: 's' });\n// @ts-expect-error typed, not any\nc.getOrderStatus(1);\n");
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'use.ts'],
      { cwd: app, encoding: 'utf8' },
    );
    assert.equal(tsc.status, 0, `${tsc.stdout}\n${tsc.stderr}`);
  });
});
