// The README, run as written by a newcomer, in child processes: `npm start` (the root script, a
// real anvil, PGlite in a data directory relative to the repository root), the quick start's
// `npx tollgate …` and `curl …` lines, the webhook CLI lines, the SDK example (plain Node importing
// `@tollgate/sdk`, paid on the dev chain until INVOICED), the DELEGATE example (gasless, with a
// callback, from dev.json), the hosted-checkout example and a restart of `npm start` on the same
// data directory (a new dev chain: a warning, never an error line), after which the DELEGATE
// example runs again, on the new chain.
// The code is extracted from README.md, so an edit of the README that breaks it fails here.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import { transferToken } from '@tollgate/devchain';
import { codeBlocks, startNpm, type NpmProcess } from './readme-fixtures.ts';
import { freePort } from '../helpers/net.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const WORK_REL = `test-artifacts/readme-${process.pid}`;
const WORK = join(ROOT, WORK_REL);
// Relative on purpose: `npm start` and `npx tollgate` must resolve it from the same folder (the root).
const DATA_DIR = `${WORK_REL}/.tollgate`;
const PLAIN_NODE = { NODE_OPTIONS: '' };

/** Runs one shell line of the README from the repository root; returns stdout (fails on exit ≠ 0). */
function sh(line: string, env: Record<string, string>): string {
  const r = spawnSync('sh', ['-c', line], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...PLAIN_NODE, ...env }, timeout: 30_000 });
  assert.equal(r.status, 0, `${line}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Commands of a ```sh block, comments removed; `port` replaces the default 8402. */
function shellLines(block: string, port: number): string[] {
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.replaceAll('127.0.0.1:8402', `127.0.0.1:${port}`));
}

/** Runs a README code example as a plain-Node ES module in the repository (so `@tollgate/sdk` resolves). */
function runExample(name: string, code: string, env: Record<string, string>) {
  const file = join(WORK, name);
  writeFileSync(file, code);
  const child = spawn(process.execPath, [file], { cwd: ROOT, env: { ...process.env, ...PLAIN_NODE, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { output: () => out, exited, kill: () => child.kill('SIGKILL') };
}

describe('README quick start on a fresh data directory', () => {
  let server: NpmProcess | undefined;
  after(async () => {
    // Ctrl-C first: the dev profile's anvil runs in its own process group, so only the gateway's
    // own shutdown stops it (a SIGKILL left it holding port 8545 for the files after this one).
    if (server) await Promise.race([server.stop('SIGINT'), new Promise((r) => setTimeout(r, 10_000))]);
    await server?.stop('SIGKILL');
    rmSync(WORK, { recursive: true, force: true });
  });

  it('npm start, the CLI and curl lines, the SDK and checkout examples, and a restart, as the README shows them', async () => {
    const started = Date.now();
    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(WORK, { recursive: true });
    const port = await freePort();
    const env = { DATA_DIR, PORT: String(port) };

    // Quick start: `npm install` ran before the tests (CI runs `npm ci`); `npm start` is run here.
    const quick = codeBlocks(README, 'Quick start');
    assert.deepEqual(shellLines(quick[0]!.code, port), ['npm install', 'npm start']);
    server = startNpm(['start'], ROOT, env);
    await server.waitFor(/payer private key (0x[0-9a-f]{64})/, 60_000);
    const text = server.output();
    // `npm start` runs on the pinned `node` devDependency (Node 24) whatever node runs npm itself.
    const pinned = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies.node;
    assert.equal(/^ {2}node\s+(v\S+)$/m.exec(text)?.[1], `v${pinned}`, 'the node `npm start` runs on');
    const apiKey = /demo API key\s+(\S+)/.exec(text)![1]!;
    const apiSecret = /demo API secret\s+(\S+)/.exec(text)![1]!;
    const payer = /funded payer\s+(0x[0-9a-fA-F]{40})/.exec(text)![1]!;
    const payerKey = /payer private key\s+(0x[0-9a-f]{64})/.exec(text)![1]! as `0x${string}`;
    const rpcUrl = /chain\s+31337 at (http:\/\/\S+)/.exec(text)![1]!;
    const usdc = /token USDC\s+(0x[0-9a-fA-F]{40})/.exec(text)![1]! as `0x${string}`;
    const wallet = /receiving wallet (0x[0-9a-fA-F]{40})/.exec(text)![1]! as `0x${string}`;
    // The data lands where the README says: under the folder `npm start` was typed in.
    assert.ok(readFileSync(join(ROOT, DATA_DIR, 'admin.token'), 'utf8').startsWith('tgadm_'));

    // The quick start ends at the portal: the printed demo user signs in, the page is served.
    const portalLine = /portal\s+(http:\S+\/portal)\s+sign in with (\S+) \/ (\S+)/.exec(text);
    assert.ok(portalLine, text);
    assert.match(README, /open http:\/\/127\.0\.0\.1:8402\/portal and sign in with `demo@example\.com`/);
    assert.equal(readFileSync(join(ROOT, DATA_DIR, 'portal.password'), 'utf8').trim(), portalLine[3]);
    const page = await fetch(portalLine[1]!);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Tollgate portal/);
    const signIn = await fetch(`http://127.0.0.1:${port}/portal/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: portalLine[2], password: portalLine[3] }) });
    assert.equal(signIn.status, 200, await signIn.text());

    const lines = shellLines(quick[1]!.code, port);
    assert.deepEqual(
      lines.map((l) => l.split(' ').slice(0, 2).join(' ')),
      ['npx tollgate', 'curl http://127.0.0.1:' + port + '/merchants/demo', 'curl http://127.0.0.1:' + port + '/openapi.json'],
    );
    assert.match(sh(lines[0]!, env), /merchant_id: demo/);
    assert.equal(JSON.parse(sh(lines[1]!, env)).merchant_id, 'demo');
    assert.equal(JSON.parse(sh(lines[2]!, env)).openapi.startsWith('3.1'), true);

    // Webhooks: every CLI line except `listen` (long-running; webhooks-cli.test.ts runs it).
    const hooks = shellLines(codeBlocks(README, 'Webhooks')[0]!.code, port).filter((l) => !l.includes('tollgate listen'));
    assert.equal(hooks.length, 3);
    for (const l of hooks) sh(l, env);

    // Return URLs: the README's CLI lines (Hosted checkout section) against the demo merchant.
    const checkoutBlocks = codeBlocks(README, 'Hosted checkout');
    const [list, change] = shellLines(checkoutBlocks.find((b) => b.lang === 'sh')!.code, port);
    const listed = sh(list!, env);
    assert.match(listed, /: https:\/\/shop\.example\n/);
    assert.match(listed, /: http:\/\/localhost:8080\n/);
    const changed = sh(change!, env);
    assert.match(changed, /https:\/\/shop\.example\/thanks/);
    assert.doesNotMatch(changed, /localhost:8080/);

    // The SDK example, verbatim, with the variables it leaves to the reader; paid when it shows terms.
    const sdkExample = codeBlocks(README, 'Taking a payment').find((b) => b.lang === 'ts')!.code;
    const prelude = 'const { apiKey, apiSecret, payerAddress } = JSON.parse(process.env.README_VARS);\n';
    const sdkRun = runExample('sdk-example.mjs', prelude + sdkExample.replaceAll('127.0.0.1:8402', `127.0.0.1:${port}`) + "\nconsole.log('RESULT ' + JSON.stringify({ status: final.status, orderId: order.orderId }));\n", {
      README_VARS: JSON.stringify({ apiKey, apiSecret, payerAddress: payer }),
    });
    try {
      await until(() => sdkRun.output().includes('CHECKOUT_VERIFIED') || sdkRun.output().includes('Error'), 20_000, sdkRun.output);
      assert.doesNotMatch(sdkRun.output(), /Error/);
      await transferToken({ rpcUrl, chainId: 31337, privateKey: payerKey, token: usdc, to: wallet, amount: 2_500_000n });
      assert.equal(await withTimeout(sdkRun.exited, 25_000, sdkRun.output), 0, sdkRun.output());
    } finally {
      sdkRun.kill();
    }
    const result = JSON.parse(/RESULT (.*)/.exec(sdkRun.output())![1]!) as { status: string; orderId: string };
    assert.equal(result.status, 'INVOICED', sdkRun.output());

    // DELEGATE: the CLI line and the Node example of "Taking a payment with a callback", verbatim but
    // for the data directory, against the demo DELEGATE merchant of dev.json (gasless, callback run).
    const dBlocks = codeBlocks(README, 'Taking a payment with a callback');
    const dLines = shellLines(dBlocks.find((b) => b.lang === 'sh')!.code, port);
    assert.deepEqual(dLines, ['npx tollgate merchant callbacks demo-delegate']);
    assert.match(sh(dLines[0]!, env), /eip712_name: Tollgate Example Credit/);
    const dCode = dBlocks.find((b) => b.lang === 'ts')!.code;
    assert.ok(dCode.includes("'.tollgate/dev.json'"), 'the example reads the dev profile file');
    const dRun = runExample('delegate-example.mjs', dCode.replace("'.tollgate/dev.json'", `'${DATA_DIR}/dev.json'`), {});
    try {
      assert.equal(await withTimeout(dRun.exited, 60_000, dRun.output), 0, dRun.output());
    } finally {
      dRun.kill();
    }
    assert.match(dRun.output(), /INVOICED succeeded 0x[0-9a-f]{64}/, dRun.output());

    // The hosted-checkout example on the demo merchant, with the client of the SDK example.
    const coExample = checkoutBlocks.find((b) => b.lang === 'ts')!.code;
    const coPrelude = "import { TollgateClient } from '@tollgate/sdk';\nconst { apiKey, apiSecret, baseUrl } = JSON.parse(process.env.README_VARS);\nconst tollgate = new TollgateClient({ baseUrl, apiKey, apiSecret });\n";
    const coRun = runExample('checkout-example.mjs', coPrelude + coExample + "\nconsole.log('RESULT ' + JSON.stringify(session));\n", { README_VARS: JSON.stringify({ apiKey, apiSecret, baseUrl: `http://127.0.0.1:${port}` }) });
    assert.equal(await withTimeout(coRun.exited, 20_000, coRun.output), 0, coRun.output());
    const session = JSON.parse(/RESULT (.*)/.exec(coRun.output())![1]!) as { checkout_id: string; url: string };
    assert.match(session.url, /\/checkout\/pay#cs_/);
    assert.equal(session.url.split('#')[1], session.checkout_id);

    // Restart on the same data directory: a new anvil is a new chain under the same chain id.
    await server.stop('SIGINT');
    assert.match(server.output(), /SIGINT received, stopping/);
    assert.doesNotMatch(server.output(), /"level":(50|60)/, 'no error line in the first run');
    server = startNpm(['start'], ROOT, env);
    await server.waitFor(/payer private key/, 60_000);
    await server.waitFor(/new chain under chain id 31337/, 15_000);
    const order = await fetch(`http://127.0.0.1:${port}/api/v1/orders/${result.orderId}`, { headers: signedHeaders({ apiKey, apiSecret }) });
    assert.equal(((await order.json()) as { status: string }).status, 'INVOICED', 'an order invoiced on the previous dev chain stays INVOICED');
    // The DELEGATE example again on the new chain: the executor's database remembers nonces of the
    // old chain; it continues from the new chain's (settlement/executor.ts, a new epoch), so the
    // gasless relay and the settlement are mined (before: relay queued at nonce N, waitForOrder hung).
    const dRun2 = runExample('delegate-example-2.mjs', dCode.replace("'.tollgate/dev.json'", `'${DATA_DIR}/dev.json'`), {});
    try {
      assert.equal(await withTimeout(dRun2.exited, 60_000, dRun2.output), 0, dRun2.output());
    } finally {
      dRun2.kill();
    }
    assert.match(dRun2.output(), /INVOICED succeeded 0x[0-9a-f]{64}/, dRun2.output());
    await server.stop('SIGINT');
    const errors = server
      .output()
      .split('\n')
      .filter((l) => /"level":(50|60)/.test(l));
    assert.deepEqual(errors, [], 'a restart logs no error line');
    // One warning line (JSON, fields in any order: pino writes msg last) names the new chain and
    // keeps the two invoiced orders: the SDK example's order and the first DELEGATE example's.
    const reset = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{"level":40,') && l.includes('new chain under chain id 31337'))
      .map((l) => JSON.parse(l) as { invoiced_kept?: number });
    assert.deepEqual(
      reset.map((l) => l.invoiced_kept),
      [2],
      "the SDK example's order and the first DELEGATE example's",
    );
    // ~55 s on a loaded 2-core machine; not asserted (a timing bound would flake under load).
    console.log(`readme-quickstart: ${Date.now() - started} ms`);
  });
});

async function until(cond: () => boolean, ms: number, out: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out; output:\n${out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, out: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms; output:\n${out()}`)), ms)));
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}
