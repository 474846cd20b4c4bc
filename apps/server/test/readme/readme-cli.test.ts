// The README's admin CLI table and its configuration-file example, run as written: every
// `tollgate merchant …` command of the table (placeholders filled in) against a real server, and
// the config JSON (its `0x…` placeholder filled in) through the real config loader.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { createWalletClient, createPublicClient, http, type Address } from 'viem';
import { foundry } from 'viem/chains';
import { ExampleCreditAdapterArtifact } from '@tollgate/contracts';
import { startAnvil, type AnvilHandle } from '@tollgate/devchain';
import { loadConfig } from '../../src/config/load.ts';
import { SettlementSigner } from '../../src/config/schema.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';
import { backends, createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { codeBlocks, startCommand } from './readme-fixtures.ts';
import { freePort } from '../helpers/net.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ADDRESS = '0x8ba1f109551bd432803012645ac136ddd64dba72';

/** The CLI column of the README's "Admin API and CLI" table, one command per row. */
function tableCommands(): string[] {
  const start = README.indexOf('## Admin API and CLI');
  const section = README.slice(start, README.indexOf('\n## ', start + 1));
  return [...section.matchAll(/^\|.*\| `(tollgate [^`]+)`[^|]*\|$/gm)].map((m) => m[1]!);
}

/** A card order paid with the TEST processor's duplicate-charge card: held for `duplicate_payment`. */
async function paidCardOrder(server: TestServer): Promise<string> {
  const m = await server.createMerchant({ name: 'Card CLI', topUp: '1.00' });
  assert.equal((await server.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: true })).status, 200);
  const s = await server.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { checkout_type: 'DIRECT', payment_rails: 'fiat', fiat_currency: 'USD', fiat_amount: '5.00' } });
  assert.equal(s.status, 200, s.text);
  const start = await server.request('POST', `/checkout/v1/sessions/${s.body.checkout_id}/card`, { body: {} });
  assert.equal(start.status, 200, start.text);
  const paid = await server.request('POST', `/checkout/v1/sessions/${s.body.checkout_id}/card/test-payment`, { body: { number: '4000000000001018', exp_month: 12, exp_year: 2099, cvc: '123' } });
  assert.deepEqual(paid.body.held_reasons, ['duplicate_payment'], paid.text);
  return start.body.order_id;
}

describe('README admin CLI table and config example', () => {
  let server: TestServer;
  let anvil: AnvilHandle;
  /** a real callback adapter (EIP-712 domain "Shop-Adapter" / "1"): registration reads it on chain */
  let adapter: Address;
  before(async () => {
    // DELEGATE set up in config (a settlement contract address and an executor key) and a real
    // chain with the example adapter deployed: registration checks the adapter's code and EIP-712
    // domain on chain; nothing here settles.
    const key = `0x${'11'.repeat(32)}` as const;
    anvil = await startAnvil();
    const deployer = privateKeyToAccount(anvil.accounts[0]!.privateKey);
    const wallet = createWalletClient({ account: deployer, chain: { ...foundry, id: anvil.chainId }, transport: http(anvil.rpcUrl) });
    const hash = await wallet.deployContract({ ...ExampleCreditAdapterArtifact, args: ['Shop-Adapter', '1', '0x000000000000000000000000000000000000dEaD', fakeChain().tokens[0]!.address as Address] } as never);
    adapter = (await createPublicClient({ transport: http(anvil.rpcUrl) }).waitForTransactionReceipt({ hash })).contractAddress!;
    server = await startTestServer({
      backend: 'pglite',
      chains: [{ ...fakeChain(), rpcUrl: anvil.rpcUrl, settlementContract: '0x000000000000000000000000000000000000dead' }],
      config: { settlement: new SettlementSigner(key, privateKeyToAccount(key).address) },
    });
  });
  after(async () => {
    await server?.close();
    await anvil?.stop();
  });

  async function run(line: string): Promise<string> {
    const args = line.split(/\s+/).slice(1);
    const p = spawnTollgate(args, { TOLLGATE_URL: server.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    const code = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
    assert.equal(code, 0, `${line}\n${p.output()}`);
    return p.output();
  }

  it('`tollgate help` prints the usage (it answered "unknown command")', async () => {
    const out = await run('tollgate help');
    assert.match(out, /^usage: tollgate <command>/m);
    assert.match(out, /card enable ID/);
  });

  it('every merchant command of the table works with its placeholders filled in', async () => {
    const cmds = tableCommands();
    assert.deepEqual(
      cmds.map((c) => c.split(' ').slice(0, 3).join(' ')),
      [
        'tollgate merchant create',
        'tollgate merchant show',
        'tollgate merchant add-wallet',
        'tollgate merchant top-up',
        'tollgate merchant create-key',
        'tollgate merchant revoke-key',
        'tollgate merchant return-urls',
        'tollgate merchant set-tolerance',
        'tollgate mpp set-price',
        'tollgate mpp rotate-receipt-key',
        'tollgate merchant callback',
        'tollgate merchant callbacks',
        'tollgate order refund',
        'tollgate link create',
        'tollgate link list',
        'tollgate link deactivate',
        'tollgate chains',
        'tollgate portal add-user',
        'tollgate card enable',
        'tollgate card simulate',
        'tollgate card release',
        'tollgate card refund',
      ],
    );
    const fill = (c: string, key = '') =>
      c
        .replace('[--id ID]', '--id cli_shop')
        .replace('NAME', 'Shop')
        .replace(/\bID\b/g, 'cli_shop')
        .replace('0x…', ADDRESS)
        .replace('KEY', key);

    assert.match(await run(fill(cmds[0]!)), /merchant_id: cli_shop/);
    await run(fill(cmds[2]!));
    await run(fill(cmds[3]!));
    const created = await run(fill(cmds[4]!));
    const key = /api_key: (\S+)/.exec(created)?.[1];
    assert.ok(key, created);
    await run(fill(cmds[5]!, key));
    // return-urls: the list form, then --add and --remove as the table names them.
    assert.equal(fill(cmds[6]!), 'tollgate merchant return-urls cli_shop [--add URL …] [--remove URL …]');
    const bare = 'tollgate merchant return-urls cli_shop';
    assert.match(await run(`${bare} --add https://shop.example/thanks --add https://shop.example/cart`), /shop\.example\/cart/);
    const removed = await run(`${bare} --remove https://shop.example/cart`);
    assert.doesNotMatch(removed, /shop\.example\/cart/);
    const shown = await run(fill(cmds[1]!));
    assert.match(shown, /name: Shop/);
    assert.match(shown, new RegExp(ADDRESS));
    assert.match(shown, /available: 10\.00/);
    assert.match(shown, /https:\/\/shop\.example\/thanks/);
    assert.match(await run(`${bare}`), /https:\/\/shop\.example\/thanks/);
    assert.match(await run(fill(cmds[7]!)), /underpay_tolerance_bps: 50/);
    // Machine payments: the price row names a second command (`mpp routes ID`) after the first.
    const priceRow = README.split('\n').find((l) => l.includes('`tollgate mpp set-price'))!;
    const listCmd = /, `(tollgate mpp routes [^`]+)`/.exec(priceRow)?.[1];
    assert.equal(listCmd, 'tollgate mpp routes ID');
    assert.match(await run(fill(cmds[8]!)), /GET:api:data/);
    assert.match(await run(fill(listCmd!)), /1000000/);
    assert.match(await run(fill(cmds[9]!)), /kid/);
    // DELEGATE rows, on a DELEGATE merchant (created through the API: the table's create row is DIRECT).
    const dm = await fetch(`${server.url}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Delegate Shop', merchant_id: 'cli_dshop', receive_type: 'DELEGATE' }),
    });
    assert.equal(dm.status, 201, await dm.text());
    const dfill = (c: string) =>
      c
        .replace(/\bID\b/g, 'cli_dshop')
        .replace('0x…', adapter)
        .replace('NAME', 'Shop-Adapter');
    assert.equal(cmds[10], 'tollgate merchant callback ID --chain 31337 --contract 0x… --eip712-name NAME --eip712-version 1');
    assert.match(await run(dfill(cmds[10]!)), new RegExp(`callback_contract: ${adapter}`, 'i'));
    const listed = await run(dfill(cmds[11]!));
    assert.match(listed, /eip712_name: Shop-Adapter/);
    assert.match(listed, /core_address: 0x000000000000000000000000000000000000dead/);
    // refund: an unknown order is refused with the API's 404 (a real refund runs in delegate-settlement.test.ts).
    assert.equal(cmds[12], 'tollgate order refund ORDER_ID');
    const refund = spawnTollgate(['order', 'refund', 'ord_missing'], { TOLLGATE_URL: server.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    assert.equal(await new Promise((resolve) => refund.child.once('exit', resolve)), 1);
    assert.match(refund.output(), /order not found|order_not_found/);
    // Hosted quick-pay: a product and its link, the list (and the sessions command of the same row), deactivation.
    const link = await run(fill(cmds[13]!).replace('NAME', 'Shop'));
    const linkId = /link_id: (pl_\S+)/.exec(link)?.[1];
    assert.ok(linkId, link);
    assert.match(link, new RegExp(`url: http://127\\.0\\.0\\.1:8402/quickpay/pay/${linkId}`));
    const listed14 = await run(fill(cmds[14]!));
    // One line per link naming what it sells and its price, not only the product id.
    assert.match(listed14, new RegExp(`${linkId}\\s+Shop\\s+9\\.99\\s+crypto\\s+active`), listed14);
    const listRow = README.split('\n').find((l) => l.includes('`tollgate link list'))!;
    const sessionsCmd = /, `(tollgate link sessions [^`]+)`/.exec(listRow)?.[1];
    assert.equal(sessionsCmd, 'tollgate link sessions ID LINK_ID');
    await run(fill(sessionsCmd!).replace('LINK_ID', linkId));
    assert.match(await run(fill(cmds[15]!).replace('LINK_ID', linkId)), /active: false/);
    assert.match(await run(cmds[16]!), /31337/);
    const user = await run(fill(cmds[17]!).replace('EMAIL', 'owner@cli-shop.example'));
    const password = /password: (\S+)/.exec(user)?.[1];
    assert.ok(password, user);
    const login = await fetch(`${server.url}/portal/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'owner@cli-shop.example', password }) });
    assert.equal(login.status, 200, 'the printed password signs in');

    // Card rail (TEST processor): enabling it, a paid card order of a checkout session, then the three card rows.
    assert.match(await run(fill(cmds[18]!)), /card_enabled: true/);
    assert.equal((await server.admin('GET', '/admin/v1/merchants/cli_shop')).body.card_enabled, true);
    assert.match(await run(fill(cmds[18]!).replace('enable', 'disable')), /card_enabled: false/);
    const ord = await paidCardOrder(server);
    const card = (c: string) => c.replace('ORDER_ID', ord);
    assert.match(await run(card(cmds[19]!)), /outcome: dispute/);
    assert.match(await run(card(cmds[20]!)), /status: PAYMENT_CONFIRMED/); // still held for the duplicate
    assert.match(await run(card(cmds[21]!)), /refunded_amount: 1\.00/);

    // What the commands did, read back through the admin API.
    const m = await fetch(`${server.url}/admin/v1/merchants/cli_shop`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const body = (await m.json()) as { underpay_tolerance_bps: number; return_urls: string[]; api_keys: { api_key: string; revoked_at?: string }[]; wallets: unknown[] };
    assert.deepEqual(body.return_urls, ['https://shop.example/thanks']);
    assert.equal(body.underpay_tolerance_bps, 50);
    assert.equal(body.wallets.length, 1);
    assert.ok(!body.api_keys.some((k) => k.api_key === key && !k.revoked_at), JSON.stringify(body.api_keys));

    // Removing what is not on the list is refused and changes nothing.
    const p = spawnTollgate([...bare.split(' ').slice(1), '--remove', 'https://nope.example'], { TOLLGATE_URL: server.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    assert.equal(await new Promise((resolve) => p.child.once('exit', resolve)), 1);
    assert.match(p.output(), /not on the return-URL list: https:\/\/nope\.example/);
  });

  it('the configuration-file example loads (placeholder address filled in)', () => {
    const block = codeBlocks(README, 'Configuration').find((b) => b.lang === 'json')!.code;
    const dir = mkdtempSync(join(tmpdir(), 'tg-readme-config-'));
    try {
      writeFileSync(join(dir, 'tollgate.json'), block.replace('0x…', ADDRESS));
      const config = loadConfig({ TOLLGATE_CONFIG: join(dir, 'tollgate.json'), MASTER_KEY: 'ab'.repeat(32) }, dir);
      assert.equal(config.environment, 'production');
      assert.equal(config.chains[0]!.chainId, 137);
      assert.equal(config.fees.perOrderMicros, 10_000n);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('production setup: `openssl rand -hex 32`, `npm run build` and the `NODE_ENV=production npx tollgate serve` line, with the config example, on PostgreSQL', { skip: !backends().includes('postgres') && 'TEST_DATABASE_URL not set' }, async () => {
    const start = README.indexOf('## Production setup');
    const section = README.slice(start, README.indexOf('\n## ', start + 1));
    const keyCmd = /`(openssl rand -hex 32)`/.exec(section)![1]!;
    const masterKey = spawnSync('sh', ['-c', keyCmd], { encoding: 'utf8' }).stdout.trim();
    assert.match(masterKey, /^[0-9a-f]{64}$/);
    const serveLine = /`(NODE_ENV=production DATABASE_URL=postgres:\/\/… MASTER_KEY=… ADMIN_TOKEN=… TOLLGATE_CONFIG=\/etc\/tollgate\.json npx tollgate serve)`/.exec(section)?.[1];
    assert.ok(serveLine, section);
    // The compiled build the line runs, made as the README says.
    const buildCmd = /`(npm run build)`/.exec(section)![1]!;
    const built = spawnSync('sh', ['-c', buildCmd], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    assert.equal(built.status, 0, `${built.stdout}\n${built.stderr}`);

    const dir = mkdtempSync(join(tmpdir(), 'tg-readme-prod-'));
    const db = await createScratchDatabase();
    const port = await freePort();
    writeFileSync(
      join(dir, 'tollgate.json'),
      codeBlocks(README, 'Configuration')
        .find((b) => b.lang === 'json')!
        .code.replace('0x…', ADDRESS),
    );
    const line = serveLine.replace('postgres://…', db.url).replace('MASTER_KEY=…', `MASTER_KEY=${masterKey}`).replace('ADMIN_TOKEN=…', `ADMIN_TOKEN=${TEST_ADMIN_TOKEN}`).replace('/etc/tollgate.json', join(dir, 'tollgate.json'));
    // PORT only to avoid another instance's 8402; everything else is the README's line.
    const p = startCommand('sh', ['-c', line], ROOT, { PORT: String(port), LOG_LEVEL: 'warn' });
    try {
      await p.waitFor(/tollgate listening on http:\/\/127\.0\.0\.1:\d+/, 30_000);
      assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
      const m = await fetch(`http://127.0.0.1:${port}/admin/v1/merchants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Prod shop' }),
      });
      const created = (await m.json()) as { api_key: string };
      assert.equal(m.status, 201);
      assert.match(created.api_key, /^tg_live_/, 'a production deployment issues live keys');
    } finally {
      await p.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
      await dropScratchDatabase(db.name);
    }
  });
});
