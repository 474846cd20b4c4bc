// The compiled production build (scripts/build.mjs, `npm run build`): built into a scratch folder,
// run with plain node (no loader, no TypeScript), and compared with the source run (tsx) on the same
// configuration: the same OpenAPI document byte for byte, the same pre-built browser pages, and the
// quick start's merchant path (create an order, read it, cancel it) through the SDK, on PGlite and on
// PostgreSQL. `tollgate` with NODE_ENV=production runs the compiled build, or says how to make one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { TollgateClient } from '@tollgate/sdk';
import { backends, createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { adminCall } from '../helpers/reliability.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SERVER = join(ROOT, 'apps', 'server');
const OUT = join(SERVER, `.test-build-${process.pid}`);
const USDC = '0x5fbdb2315678afecb367f032d93f642f64180aa3';

function expectStatus(r: { status: number; text: string; body: any }, status: number): any {
  assert.equal(r.status, status, r.text);
  return r.body;
}

describe('compiled production build', () => {
  const work = mkdtempSync(join(tmpdir(), 'tg-compiled-'));
  const cfg = join(work, 'tollgate.json');
  before(() => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--outdir', OUT], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    writeFileSync(cfg, JSON.stringify({ environment: 'test', chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:1', tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }] }] }));
  });
  after(() => {
    rmSync(OUT, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('is plain JavaScript: no chunk imports tsx or esbuild at load, and every page is pre-built', () => {
    const js = readdirSync(OUT).filter((f) => f.endsWith('.js'));
    assert.ok(js.includes('tollgate.js') && js.includes('pglite-create.js'), js.join(' '));
    for (const f of js) {
      const src = readFileSync(join(OUT, f), 'utf8');
      assert.doesNotMatch(src, /^import[^;]*from\s*["'](tsx|esbuild)[/"']/m, `${f} imports a development tool at load`);
      assert.doesNotMatch(src, /from\s*["'][^"']+\.ts["']/, `${f} imports a TypeScript file`);
    }
    assert.deepEqual(readdirSync(join(OUT, 'pages')).sort(), ['checkout.json', 'portal.json', 'quickpay.json']);
    assert.ok(readdirSync(join(OUT, 'migrations')).length >= 20);
  });

  it('loads the Solana SDK, nodemailer and PGlite only on use (not in what `serve` imports at start); viem and TypeBox are bundled', () => {
    // The static imports of cli.js and the serve chunk (loaded by `tollgate serve`), followed
    // through the chunks; `import()` expressions are not followed (they load on first use).
    const serve = readdirSync(OUT).find((f) => /^serve-\w+\.js$/.test(f));
    assert.ok(serve, 'a serve chunk');
    const seen = new Set<string>();
    const packages = new Set<string>();
    const queue = ['cli.js', serve];
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
      if (seen.has(f)) continue;
      seen.add(f);
      for (const m of readFileSync(join(OUT, f), 'utf8').matchAll(/^\s*(?:import|export)\s*(?:[^'"();]*?\sfrom\s*)?["']([^"']+)["']/gm)) {
        if (m[1]!.startsWith('./')) queue.push(m[1]!.slice(2));
        else packages.add(m[1]!);
      }
    }
    assert.ok(packages.has('fastify') && packages.has('pg'), `the closure is the gateway's: ${[...packages].join(' ')}`);
    // PGlite loads only for the embedded database (db/open.ts), not on PostgreSQL.
    for (const lazy of ['@solana/kit', '@solana-program/token', 'nodemailer', '@electric-sql/pglite']) assert.ok(!packages.has(lazy), `${lazy} is imported at start`);
    // …and they are still there for a gateway that uses them.
    const all = readdirSync(OUT)
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(OUT, f), 'utf8'))
      .join('\n');
    for (const lazy of ['@solana/kit', '@solana-program/token', 'nodemailer', '@electric-sql/pglite']) assert.match(all, new RegExp(`["']${lazy.replace('/', '\\/')}["']`), lazy);
    // viem and TypeBox are bundled (scripts/build-graph.mjs BUNDLED): only the parts the gateway
    // uses are in the chunks, and no chunk loads either package's whole index from node_modules.
    for (const bundled of ['viem', 'viem/accounts', '@sinclair/typebox', '@sinclair/typebox/value', 'ox', 'abitype']) assert.doesNotMatch(all, new RegExp(`from\\s*["']${bundled.replace('/', '\\/')}["']`), `${bundled} is imported, not bundled`);
    assert.match(all, /function privateKeyToAccount\(/, 'the bundled viem accounts');
  });

  for (const backend of backends()) {
    describe(`on ${backend}`, () => {
      let compiled: TollgateProcess | undefined;
      let source: TollgateProcess | undefined;
      let dropDb: (() => Promise<void>) | undefined;
      const urls: { compiled?: string; source?: string } = {};
      before(async () => {
        const env: Record<string, string> = { TOLLGATE_CONFIG: cfg, MASTER_KEY: 'cd'.repeat(32), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
        if (backend === 'postgres') {
          const db = await createScratchDatabase();
          env.DATABASE_URL = db.url;
          dropDb = () => dropScratchDatabase(db.name);
        } else {
          env.DATA_DIR = mkdtempSync(join(work, 'data-'));
        }
        // The compiled build first (it migrates the empty database), then the source run beside it.
        compiled = spawnTollgate(['serve', '--role', 'api'], env, undefined, [], join(OUT, 'tollgate.js'));
        urls.compiled = (await compiled.waitFor(/listening on (http:\/\/\S+) \(node (v[\d.]+)\)/, 60_000))[1];
        // PGlite: one process per data directory, so the source run gets its own.
        const sourceEnv = backend === 'pglite' ? { ...env, DATA_DIR: mkdtempSync(join(work, 'data-')) } : env;
        source = spawnTollgate(['serve', '--role', 'api'], sourceEnv);
        urls.source = (await source.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1];
      });
      after(async () => {
        await compiled?.stop();
        await source?.stop();
        await dropDb?.();
      });

      it('runs under plain node: the command line loads no module hook', () => {
        const argv = readFileSync(`/proc/${compiled!.child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
        assert.deepEqual(argv.slice(1), [join(OUT, 'tollgate.js'), 'serve', '--role', 'api']);
        assert.equal(argv[0], process.execPath);
      });

      it('serves the same OpenAPI document as the source run, byte for byte', async () => {
        const [a, b] = await Promise.all([fetch(`${urls.compiled}/openapi.json`), fetch(`${urls.source}/openapi.json`)]);
        assert.equal(a.status, 200);
        const [ta, tb] = [await a.text(), await b.text()];
        assert.ok(JSON.parse(ta).paths['/api/v1/orders'], 'the document lists the order routes');
        assert.equal(ta, tb);
      });

      it('serves the pages the source run builds on demand (checkout, portal)', async () => {
        for (const path of ['/checkout/pay', '/portal/']) {
          const [a, b] = await Promise.all([fetch(`${urls.compiled}${path}`), fetch(`${urls.source}${path}`)]);
          assert.equal(a.status, 200, path);
          const html = await a.text();
          assert.equal(html, await b.text(), `${path}: the same HTML, so the same content-hashed assets`);
          const js = /src="([^"]+app\.js\?v=[0-9a-f]+)"/.exec(html)?.[1];
          assert.ok(js, `${path} links its script`);
          const asset = await fetch(new URL(js, `${urls.compiled}${path}`));
          assert.equal(asset.status, 200);
        }
      });

      it('takes the quick start path: merchant, createOrder (402 terms), status, cancel', async () => {
        const base = urls.compiled!;
        const m = expectStatus(await adminCall(base, 'POST', '/admin/v1/merchants', { name: 'Compiled Shop' }), 201);
        expectStatus(await adminCall(base, 'POST', `/admin/v1/merchants/${m.merchant_id}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: '0x' + '11'.repeat(20) }), 201);
        expectStatus(await adminCall(base, 'POST', `/admin/v1/merchants/${m.merchant_id}/fee-balance/top-ups`, { amount: '10.00' }), 200);
        const tollgate = new TollgateClient({ baseUrl: base, apiKey: m.api_key, apiSecret: m.api_secret });
        const order = await tollgate.createOrder({ dappOrderId: 'compiled-1', chainId: 31337, tokenSymbol: 'USDC', fromAddress: '0x' + '22'.repeat(20), amountWei: '2500000' });
        assert.equal(order.amountWei, '2500000');
        assert.equal(order.payToAddress.toLowerCase(), '0x' + '11'.repeat(20));
        assert.equal(order.tokenContract.toLowerCase(), USDC);
        const status = await tollgate.getOrderStatus(order.orderId);
        assert.equal(status.status, 'CHECKOUT_VERIFIED');
        assert.equal((await tollgate.cancelOrder(order.orderId)).status, 'CANCELLED');
        // The source run reads the same record from the same database (Postgres): one schema, one wire.
        if (backend === 'postgres') {
          const fromSource = new TollgateClient({ baseUrl: urls.source!, apiKey: m.api_key, apiSecret: m.api_secret });
          assert.equal((await fromSource.getOrderStatus(order.orderId)).status, 'CANCELLED');
        }
      });
    });
  }

  it('`tollgate` with NODE_ENV=production and no build says to run `npm run build`', () => {
    // A copy of the bin beside an empty dist/: the real bin's dist/ may exist in this checkout.
    const fake = mkdtempSync(join(SERVER, '.test-bin-'));
    try {
      const bin = join(fake, 'bin', 'tollgate.js');
      spawnSync('mkdir', ['-p', join(fake, 'bin')]);
      writeFileSync(bin, readFileSync(join(SERVER, 'bin', 'tollgate.js')));
      const r = spawnSync(process.execPath, [bin, 'serve'], { env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' }, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /NODE_ENV=production runs the compiled build.*run `npm run build` first/);
    } finally {
      rmSync(fake, { recursive: true, force: true });
    }
  });
});
