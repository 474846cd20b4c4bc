import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deploySettlement, rpcRequest, startAnvil, startDevChain, type AnvilHandle, type DevChain } from '@tollgate/devchain';
import { startLocalSvm } from '@tollgate/svm';
import { getBase58Decoder } from '@solana/kit';
import { privateKeyToAccount } from 'viem/accounts';
import { openDatabase } from '../../src/db/open.ts';
import type { Database } from '../../src/db/database.ts';
import { startTollgate } from '../../src/main.ts';
import { backends, createScratchDatabase, dropScratchDatabase, type Backend } from '../helpers/db.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { buildConfig, TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { freePort } from '../helpers/net.ts';

interface Report {
  ok: boolean;
  checks: { name: string; status: string; detail: string; data?: Record<string, unknown> }[];
}

async function doctor(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string; report?: Report }> {
  const p = spawnTollgate(['doctor', ...args], env);
  const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
  const out = p.output();
  return { code, out, ...(args.includes('--json') ? { report: JSON.parse(out) as Report } : {}) };
}

const byName = (r: Report, name: string) => {
  const c = r.checks.find((x) => x.name === name);
  assert.ok(c, `no check named ${name} in ${r.checks.map((x) => x.name).join(', ')}`);
  return c;
};

/**
 * `tollgate doctor` as a process, with the gateway's configuration, against a healthy deployment
 * (a real anvil mining a block a second, the shipped settlement contract run by our executor, a
 * migrated database whose secrets MASTER_KEY opens) and a broken one (a dead RPC whose URL holds a
 * key, an RPC of another chain, a stalled node with a clock an hour ahead, a wrong settlement
 * contract, an executor below its threshold, a pending migration, a wrong MASTER_KEY and a webhook
 * endpoint the production egress policy refuses).
 */
describe('tollgate doctor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-doctor-'));
  let dev: DevChain;
  let stalled: AnvilHandle;
  let settlement: `0x${string}`;
  const executorKey = () => dev.payers[8]!.privateKey;

  before(async () => {
    [dev, stalled] = await Promise.all([startDevChain({ blockTime: 1 }), startAnvil({ chainId: 31339 })]);
    const dep = await deploySettlement({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, deployerKey: dev.deployer.privateKey, executor: privateKeyToAccount(executorKey()).address });
    settlement = dep.settlement.toLowerCase() as `0x${string}`;
    // The stalled node's latest block is an hour ahead of this clock and nothing mines after it.
    await rpcRequest(stalled.rpcUrl, 'evm_mine', [Math.floor(Date.now() / 1000) + 3600]);
  });
  after(async () => {
    await Promise.all([dev?.stop(), stalled?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an invalid configuration is one failing line', async () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ environment: 'staging', chains: [] }));
    const r = await doctor({ TOLLGATE_CONFIG: path, MASTER_KEY: randomBytes(32).toString('hex'), DATA_DIR: join(dir, 'unused') });
    assert.equal(r.code, 1);
    assert.match(r.out, /^FAIL +config +invalid configuration: environment/m);
  });

  it("a Solana cluster: genesis, slot advancing, the delegate's SOL balance (local SVM)", async () => {
    const svm = await startLocalSvm({ slotMs: 100 });
    try {
      const seed = randomBytes(32);
      const delegateKey = getBase58Decoder().decode(seed);
      const cluster = (genesis: string) => ({
        kind: 'solana',
        chain_id: 792703800,
        rpc_url: svm.rpcUrl,
        genesis_hash: genesis,
        tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.fee || t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
      });
      const run = async (genesis: string, extra: string[] = []) => {
        const path = join(dir, `solana-${genesis.slice(0, 4)}.json`);
        writeFileSync(path, JSON.stringify({ environment: 'test', chains: [cluster(genesis)] }));
        const r = await doctor({ TOLLGATE_CONFIG: path, MASTER_KEY: randomBytes(32).toString('hex'), DATA_DIR: join(dir, 'no-db'), SOLANA_DELEGATE_KEY: delegateKey }, '--json', '--head-timeout', '5', ...extra);
        return r.report!;
      };
      // An unfunded delegate: the cluster is fine, the balance is not.
      let r = await run(svm.genesisHash);
      assert.equal(byName(r, `solana 792703800 rpc ${svm.rpcUrl}`).status, 'ok', byName(r, `solana 792703800 rpc ${svm.rpcUrl}`).detail);
      assert.match(byName(r, `solana 792703800 rpc ${svm.rpcUrl}`).detail, /slot \d+ advancing/);
      const bal = byName(r, 'solana 792703800 delegate balance');
      assert.equal(bal.status, 'fail');
      assert.match(bal.detail, /holds 0\.0 SOL: below 0\.01 \(--min-sol-balance\)/);
      // Funded (a real airdrop through the RPC), it passes; a higher floor fails it again.
      const delegate = bal.data!.delegate as string;
      await rpcRequest(svm.rpcUrl, 'requestAirdrop', [delegate, 50_000_000]);
      r = await run(svm.genesisHash);
      assert.equal(byName(r, 'solana 792703800 delegate balance').status, 'ok', byName(r, 'solana 792703800 delegate balance').detail);
      r = await run(svm.genesisHash, ['--min-sol-balance', '1.5']);
      assert.match(byName(r, 'solana 792703800 delegate balance').detail, /holds 0\.05 SOL: below 1\.5/);
      // Another cluster's genesis: refused, and the balance is not read from it.
      r = await run('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d');
      assert.match(byName(r, `solana 792703800 rpc ${svm.rpcUrl}`).detail, /serves the cluster with genesis \w+, not 5eykt4Us/);
      assert.equal(byName(r, 'solana 792703800 delegate balance').status, 'skip');
    } finally {
      await svm.stop();
    }
  });

  for (const backend of backends()) {
    it(`healthy, then broken (${backend})`, async () => {
      const masterKey = randomBytes(32).toString('hex');
      const scratch = backend === 'postgres' ? await createScratchDatabase() : undefined;
      const dbEnv: Record<string, string> = scratch ? { DATABASE_URL: scratch.url } : { DATA_DIR: join(dir, `data-${backend}`) };
      try {
        await seed(backend, scratch?.url, join(dir, `data-${backend}`), masterKey);
        const token = { symbol: 'USDC', address: dev.tokens[0]!.address.toLowerCase(), decimals: 6 };
        const chain = (chainId: number, rpcUrl: string, extra: Record<string, unknown> = {}) => ({ chain_id: chainId, rpc_url: rpcUrl, confirmations: 1, finality_confirmations: 2, tokens: [token], ...extra });
        const write = (name: string, body: unknown) => {
          writeFileSync(join(dir, name), JSON.stringify(body));
          return join(dir, name);
        };

        const healthy = write(`healthy-${backend}.json`, { environment: 'test', chains: [chain(dev.chainId, dev.rpcUrl, { settlement_contract: settlement })] });
        const env = { TOLLGATE_CONFIG: healthy, MASTER_KEY: masterKey, SETTLEMENT_KEY: executorKey(), ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...dbEnv };
        const ok = await doctor(env, '--json');
        assert.equal(ok.code, 0, ok.out);
        assert.equal(ok.report!.ok, true);
        for (const c of ok.report!.checks) assert.ok(c.status === 'ok' || (c.name === 'webhook egress' && c.status === 'warn'), `${c.name}: ${c.status} ${c.detail}`);
        assert.match(byName(ok.report!, `chain ${dev.chainId} settlement`).detail, /shipped code, executor 0x[0-9a-f]{40}, not paused/);
        assert.match(byName(ok.report!, `chain ${dev.chainId} rpc ${dev.rpcUrl}`).detail, /head \d+ advancing/);
        assert.match(byName(ok.report!, 'master key').detail, /opens the secrets at rest/);
        assert.equal(byName(ok.report!, 'settlement signer').detail, `raw, ${privateKeyToAccount(executorKey()).address}`);
        assert.match(byName(ok.report!, 'webhook egress').detail, /test environment: .* 2 enabled endpoint\(s\) pass/);
        const human = await doctor(env);
        assert.equal(human.code, 0);
        assert.match(human.out, /^OK +database +(PostgreSQL|embedded), reachable/m);
        assert.match(human.out, /All checks passed\./);

        // Broken: every chain entry and the database have something wrong.
        const dead = `http://127.0.0.1:${await freePort()}/v2/SECRETKEY123`;
        const broken = write(`broken-${backend}.json`, {
          environment: 'production',
          chains: [chain(dev.chainId, dev.rpcUrl, { settlement_contract: token.address }), chain(31338, dev.rpcUrl), chain(31339, stalled.rpcUrl), chain(31340, dead)],
        });
        await withDb(backend, scratch?.url, join(dir, `data-${backend}`), (db) => db.query(`DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`));
        // The executor's key behind a remote signer that is down.
        const { SETTLEMENT_KEY: _raw, ...withoutKey } = env;
        const signerEnv = { SETTLEMENT_SIGNER_URL: `http://127.0.0.1:${await freePort()}`, SETTLEMENT_SIGNER_ADDRESS: privateKeyToAccount(executorKey()).address };
        const bad = await doctor({ ...withoutKey, ...signerEnv, TOLLGATE_CONFIG: broken, MASTER_KEY: randomBytes(32).toString('hex') }, '--json', '--head-timeout', '8', '--min-balance', `${dev.chainId}=100000000`);
        assert.equal(bad.code, 1, bad.out);
        const r = bad.report!;
        assert.equal(r.ok, false);
        assert.doesNotMatch(bad.out, /SECRETKEY123/, "an RPC URL's path (an API key) is never printed");
        const fail = (name: string, re: RegExp) => {
          const c = byName(r, name);
          assert.equal(c.status, 'fail', `${name}: ${c.detail}`);
          assert.match(c.detail, re);
        };
        fail(`chain ${dev.chainId} settlement`, /not the shipped TollgateSettlement/);
        fail(`chain ${dev.chainId} executor balance`, /below the minimum 100000000/);
        fail(`chain 31338 rpc ${dev.rpcUrl}`, /serves chain 31337, not 31338/);
        fail(`chain 31339 rpc ${stalled.rpcUrl}`, /head stuck at block 1 for 8 s/);
        fail('chain 31339 clock', /this clock is 3\d{3} s behind the latest block's time/);
        fail('chain 31340 rpc http://127.0.0.1:' + new URL(dead).port + '/…', /unreachable/);
        assert.equal(byName(r, 'chain 31340 clock').status, 'skip');
        fail('settlement signer', /^remote, 0x[0-9a-fA-F]{40}: /);
        fail('migrations', /1 pending \(first \d{4}_\w+\): run tollgate migrate/);
        fail('master key', /MASTER_KEY does not open api_keys\.secret_ciphertext/);
        fail('webhook egress', /production: https to public addresses only.*1 of 2 enabled endpoint\(s\) refused/);
        // (8 s of head timeout: anvil mines every second, but this machine is shared and loaded)
        const healthyRpc = byName(r, `chain ${dev.chainId} rpc ${dev.rpcUrl}`);
        assert.equal(healthyRpc.status, 'ok', `the healthy RPC stays ok among the broken: ${healthyRpc.detail}`);
      } finally {
        if (scratch) await dropScratchDatabase(scratch.name);
      }
    });
  }
});

async function withDb<T>(backend: Backend, url: string | undefined, dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(backend === 'postgres' ? { databaseUrl: url, dataDir } : { dataDir });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** A migrated database with a merchant (API secret, receipt key) and two webhook endpoints: one public https, one loopback. */
async function seed(backend: Backend, url: string | undefined, dataDir: string, masterKeyHex: string): Promise<void> {
  await withDb(backend, url, dataDir, async (db) => {
    const tg = await startTollgate(buildConfig({ masterKey: Buffer.from(masterKeyHex, 'hex') }), { db, http: { logger: false }, role: 'api' });
    try {
      const call = async (path: string, body: unknown) => {
        const r = await fetch(tg.url + path, { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        assert.equal(r.status, 201, await r.clone().text());
        return (await r.json()) as Record<string, string>;
      };
      const m = await call('/admin/v1/merchants', { name: 'Doctor' });
      await call(`/admin/v1/merchants/${m.merchant_id}/webhooks`, { url: 'https://93.184.215.14/hooks', events: ['order.invoiced'] });
      await call(`/admin/v1/merchants/${m.merchant_id}/webhooks`, { url: 'http://127.0.0.1:9/hooks', events: ['order.invoiced'] });
    } finally {
      await tg.close();
    }
  });
}
