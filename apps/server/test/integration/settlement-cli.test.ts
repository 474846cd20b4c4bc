// `tollgate settlement …` end to end, as an operator runs it, on a real anvil and a running gateway:
// deploy with an owner key from a file (printing the config line, never the key), status and pending
// through the admin API, pause/unpause, rotate-executor (the gateway then reports the mismatch),
// and the two-step ownership transfer.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner } from '../../src/config/schema.ts';
import { SettlementExecutor } from '../../src/settlement/executor.ts';
import { backends } from '../helpers/db.ts';
import { sample } from '../helpers/metrics.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';

for (const backend of backends()) {
  describe(`tollgate settlement (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer | undefined;
    const dir = mkdtempSync(join(tmpdir(), 'tg-settlement-cli-'));
    const ownerKey = () => dev.payers[5]!.privateKey;
    const executorKey = () => dev.payers[8]!.privateKey;
    const executor = () => privateKeyToAccount(executorKey()).address.toLowerCase();
    let contract: Hex;

    before(async () => {
      dev = await startTestChain();
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const run = async (args: string[], env: Record<string, string> = {}) => {
      const p = spawnTollgate(['settlement', ...args], { TOLLGATE_URL: s?.url ?? 'http://127.0.0.1:9', ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...env });
      const code = p.child.exitCode ?? (await new Promise<number | null>((res) => p.child.once('exit', res)));
      return { code, out: p.output() };
    };
    const keyFile = (key: Hex) => {
      const f = join(dir, `key-${randomBytes(4).toString('hex')}`);
      writeFileSync(f, `${key}\n`, { mode: 0o600 });
      return f;
    };
    const chainArgs = () => ['--chain', String(dev.chainId), '--rpc-url', dev.rpcUrl];
    const status = async () => {
      const r = await run(['status', '--chain', String(dev.chainId), '--json']);
      assert.equal(r.code, 0, r.out);
      return JSON.parse(r.out);
    };

    it('deploy: the shipped contract, owner from the key file, executor as given; prints the config line, not the key', { timeout: 120_000 }, async () => {
      const r = await run(['deploy', ...chainArgs(), '--executor', executor(), '--owner-key-file', keyFile(ownerKey())]);
      assert.equal(r.code, 0, r.out);
      const m = /"settlement_contract": "(0x[0-9a-f]{40})"/.exec(r.out);
      assert.ok(m, r.out);
      contract = m[1] as Hex;
      assert.match(r.out, new RegExp(`owner: ${dev.payers[5]!.address.toLowerCase()}`));
      assert.doesNotMatch(r.out, new RegExp(ownerKey().slice(2), 'i'), 'the owner key is never printed');
      // Wrong chain id: refused before anything is signed.
      const wrong = await run(['deploy', '--chain', String(dev.chainId + 1), '--rpc-url', dev.rpcUrl, '--executor', executor(), '--owner-key-file', keyFile(ownerKey())]);
      assert.equal(wrong.code, 1);
      assert.match(wrong.out, new RegExp(`--rpc-url serves chain ${dev.chainId}, not ${dev.chainId + 1}: nothing sent`));
      // The gateway on that contract: it checks at start-up like `tollgate serve`.
      const chain = chainConfigOf(dev, { settlementContract: contract, confirmations: 1, finalityConfirmations: 1 });
      s = await startTestServer({ backend, chains: [chain], config: { settlement: new SettlementSigner(executorKey(), privateKeyToAccount(executorKey()).address) }, role: 'api' });
    });

    it('status and pending through the admin API: contract ok, pool balance, a recorded transaction and why it waits', { timeout: 120_000 }, async () => {
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: dev.payers[0]!.privateKey, token: dev.tokens[0]!.address, to: contract, amount: 1_500_000n });
      assert.match(hash, /^0x/);
      let v = await status();
      assert.equal(v.contract.ok, true, JSON.stringify(v));
      assert.deepEqual([v.contract.owner, v.contract.executor, v.contract.paused, v.contract.pending_owner], [dev.payers[5]!.address.toLowerCase(), executor(), false, null]);
      assert.equal(v.balances.find((b: { symbol: string }) => b.symbol === 'USDC').amount_wei, '1500000');
      // A settlement recorded but not broadcast (the worker is not running: role api).
      const ex = new SettlementExecutor({ db: s!.db, chain: chainConfigOf(dev, { settlementContract: contract }), signer: new SettlementSigner(executorKey(), privateKeyToAccount(executorKey()).address) });
      const orderId = `ord_${randomBytes(8).toString('hex')}`;
      const p = await ex.prepare({ orderId, payer: dev.payers[0]!.address, token: dev.tokens[0]!.address, amount: 1_500_000n, payee: dev.payers[3]!.address });
      assert.equal(p.kind, 'recorded');
      const pending = await run(['pending', '--chain', String(dev.chainId)]);
      assert.equal(pending.code, 0, pending.out);
      assert.match(pending.out, new RegExp(`settle ${orderId} nonce \\d+ pending \\d+s 0x[0-9a-f]{64}: recorded, not broadcast yet`));
      const text = await run(['status', '--chain', String(dev.chainId)]);
      assert.match(text.out, new RegExp(`chain ${dev.chainId}: settlement_contract ${contract}: ok`));
      assert.match(text.out, /waiting executor transactions: 1/);
      v = await status();
      assert.equal(v.pending[0].order_id, orderId);
      // /metrics counts it, with why it waits.
      const scrape = (await s!.request('GET', '/metrics')).text;
      assert.equal(sample(scrape, 'tollgate_settlement_waiting', { chain_id: String(dev.chainId), reason: 'unsent' }), 1, scrape);
      assert.equal(sample(scrape, 'tollgate_settlement_waiting', { chain_id: String(dev.chainId), reason: 'on_chain' }), 0);
    });

    it('pause and unpause with the owner key from OWNER_KEY; a key that is not the owner is refused, nothing sent', { timeout: 120_000 }, async () => {
      const r = await run(['pause', ...chainArgs(), '--contract', contract], { OWNER_KEY: ownerKey() });
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /paused: true/);
      const v = await status();
      assert.equal(v.contract.paused, true);
      assert.match(v.contract.warnings[0], /paused/);
      const notOwner = await run(['unpause', ...chainArgs(), '--contract', contract], { OWNER_KEY: dev.payers[6]!.privateKey });
      assert.equal(notOwner.code, 1);
      assert.match(notOwner.out, /the contract refuses setPaused: .*NotOwner/);
      assert.equal((await run(['unpause', ...chainArgs(), '--contract', contract], { OWNER_KEY: ownerKey() })).code, 0);
      assert.equal((await status()).contract.paused, false);
    });

    it('rotate-executor: the gateway reports the mismatch until rotated back', { timeout: 120_000 }, async () => {
      const other = dev.payers[7]!.address;
      assert.equal((await run(['rotate-executor', other, ...chainArgs(), '--contract', contract, '--owner-key-file', keyFile(ownerKey())])).code, 0);
      const v = await status();
      assert.equal(v.contract.ok, false);
      assert.equal(v.contract.problem.code, 'executor_mismatch');
      assert.equal((await run(['rotate-executor', executor(), ...chainArgs(), '--contract', contract, '--owner-key-file', keyFile(ownerKey())])).code, 0);
      assert.equal((await status()).contract.ok, true);
    });

    it('transfer-ownership is two steps: pending owner, then accept-ownership with the new key', { timeout: 120_000 }, async () => {
      const next = dev.payers[4]!;
      const step1 = await run(['transfer-ownership', next.address, ...chainArgs(), '--contract', contract, '--owner-key-file', keyFile(ownerKey())]);
      assert.equal(step1.code, 0, step1.out);
      assert.match(step1.out, /accept-ownership/);
      let v = await status();
      assert.deepEqual([v.contract.owner, v.contract.pending_owner], [dev.payers[5]!.address.toLowerCase(), next.address.toLowerCase()]);
      const wrong = await run(['accept-ownership', ...chainArgs(), '--contract', contract], { OWNER_KEY: dev.payers[6]!.privateKey });
      assert.match(wrong.out, /NotPendingOwner/);
      assert.equal((await run(['accept-ownership', ...chainArgs(), '--contract', contract], { OWNER_KEY: next.privateKey })).code, 0);
      v = await status();
      assert.deepEqual([v.contract.owner, v.contract.pending_owner], [next.address.toLowerCase(), null]);
    });
  });
}
