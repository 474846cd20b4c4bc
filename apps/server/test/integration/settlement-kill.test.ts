// The executor killed with SIGKILL (a real process death, PostgreSQL shared with the restart) at
// every step: before anything is recorded or sent, after the row is recorded but before the
// broadcast, after the broadcast but before the row is marked sent, and after it is marked sent.
// The restarted executor settles each order exactly once. Fee bumping too: killed after a
// replacement (same nonce, higher fees) is recorded but not sent, and after it is sent but not
// marked. Part of `npm run test:faults`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { orderIdToBytes32, TestTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { mine, setAutomine, startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig, SettlementSigner } from '../../src/config/schema.ts';
import { SettlementExecutor } from '../../src/settlement/executor.ts';
import { findSettlement, settlementAttempts } from '../../src/settlement/repo.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { env } from '../helpers/env.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { reconcileSettled, withSettlement } from '../helpers/settlement.ts';

const CHILD = fileURLToPath(new URL('./settlement-kill-child.ts', import.meta.url));
const AMOUNT = 1_250_000n;

if (!env.TEST_DATABASE_URL && env.TOLLGATE_TEST_STRICT === '1') {
  throw new Error('TOLLGATE_TEST_STRICT=1 but TEST_DATABASE_URL is not set: the settlement kill test cannot run');
}

describe('settlement executor killed with SIGKILL (postgres)', { skip: env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (two processes share the database)' }, () => {
  let dev: DevChain;
  let database: TestDatabase;
  let chain: ChainConfig;
  let signer: SettlementSigner;
  let usdc: Hex;
  let client: ReturnType<typeof createPublicClient>;

  before(async () => {
    dev = await startDevChain();
    database = await openTestDatabase('postgres');
    usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address;
    ({ chain, signer } = await withSettlement(dev, {
      chainId: dev.chainId,
      name: 'Anvil',
      rpcUrl: dev.rpcUrl,
      confirmations: 1,
      finalityConfirmations: 2,
      pollIntervalMs: 100,
      tokens: dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase() as Hex, decimals: t.decimals })),
    }));
    client = createPublicClient({ transport: http(dev.rpcUrl) });
  });
  after(async () => {
    await database?.drop();
    await dev?.stop();
  });

  const balance = (who: Hex) => client.readContract({ address: usdc, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });
  const executorNonce = () => client.getTransactionCount({ address: signer.executorAddress });
  const orderState = (orderId: string) => client.readContract({ address: chain.settlementContract!, abi: TollgateSettlementArtifact.abi, functionName: 'orderState', args: [orderIdToBytes32(orderId)] });

  for (const step of ['signed', 'recorded', 'sent', 'marked'] as const) {
    it(`killed after "${step}": the restart settles once`, async () => {
      const payer = dev.payers[0]!;
      await client.waitForTransactionReceipt({
        hash: await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: chain.settlementContract!, amount: AMOUNT }),
      });
      const order = { orderId: `ord_${randomBytes(10).toString('hex')}`, payer: payer.address, token: usdc, amount: AMOUNT.toString(), payee: privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address };
      const before = await executorNonce();
      const child = spawnTollgate([JSON.stringify({ databaseUrl: database.url, chain, key: signer.privateKey(), executor: signer.executorAddress, order, step })], {}, undefined, [], CHILD);
      const m = await child.waitFor(/STEP [\w-]+ (0x[0-9a-f]{64})/, 30_000);
      child.child.kill('SIGKILL');
      await new Promise((r) => child.child.once('exit', r));
      const row = await findSettlement(database.db, chain.chainId, order.orderId, 'settle');
      const restarted = new SettlementExecutor({ db: database.db, chain, signer });
      if (step === 'signed') {
        assert.equal(row, undefined, 'nothing recorded');
        assert.equal(await executorNonce(), before, 'nothing sent');
        // The restart (the worker finds the order still due) settles it from scratch.
        const out = await restarted.settle({ ...order, amount: AMOUNT }, { pollMs: 50 });
        assert.ok(out.kind === 'recorded' && out.record.status === 'confirmed', JSON.stringify(out));
      } else {
        assert.equal(row?.status, step === 'marked' ? 'sent' : 'pending', 'the row as the killed process left it');
        assert.equal(row?.txHash, m[1]);
        assert.equal(await executorNonce(), step === 'sent' || step === 'marked' ? before + 1 : before);
        // A second attempt of the same order (the worker's next tick) finds the row and signs nothing new.
        const again = await restarted.prepare({ ...order, amount: AMOUNT });
        assert.equal(again.kind, 'existing');
        const [rec] = await reconcileSettled(restarted);
        assert.equal(rec?.status, 'confirmed');
        assert.equal(rec?.txHash, m[1]);
      }
      assert.equal(await executorNonce(), before + 1, 'exactly one transaction');
      assert.equal(await balance(order.payee), AMOUNT, 'paid once');
      assert.equal(await orderState(order.orderId), 1, 'Settled on chain');
    });
  }

  // Fee bumping: killed between recording a replacement and sending it, and between sending it and
  // marking it sent. Automine is off until the restart, so the first attempt stays unmined.
  for (const step of ['bump-recorded', 'bump-sent'] as const) {
    it(`killed after "${step}": the restart sends the replacement and settles once`, async () => {
      const payer = dev.payers[0]!;
      await client.waitForTransactionReceipt({
        hash: await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: chain.settlementContract!, amount: AMOUNT }),
      });
      const order = { orderId: `ord_${randomBytes(10).toString('hex')}`, payer: payer.address, token: usdc, amount: AMOUNT.toString(), payee: privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address };
      const before = await executorNonce();
      await setAutomine(dev.rpcUrl, false);
      try {
        const child = spawnTollgate([JSON.stringify({ databaseUrl: database.url, chain, key: signer.privateKey(), executor: signer.executorAddress, order, step })], {}, undefined, [], CHILD);
        const m = await child.waitFor(/STEP [\w-]+ (0x[0-9a-f]{64})/, 30_000);
        child.child.kill('SIGKILL');
        await new Promise((r) => child.child.once('exit', r));
        const rows = await settlementAttempts(database.db, chain.chainId, order.orderId, 'settle');
        assert.deepEqual(
          rows.map((r) => [r.attempt, r.status]),
          [
            [0, 'sent'],
            [1, 'pending'],
          ],
          'the replacement recorded before it was sent',
        );
        assert.equal(rows[1]!.txHash, m[1]);
        assert.equal(rows[1]!.nonce, rows[0]!.nonce, 'same nonce');
        const inPool = await client.getTransaction({ hash: rows[1]!.txHash }).then(
          () => true,
          () => false,
        );
        assert.equal(inPool, step === 'bump-sent', step === 'bump-sent' ? 'the node has the replacement' : 'the replacement never left the process');

        // The restart (no further bump: a long after_seconds) sends the pending replacement.
        const restarted = new SettlementExecutor({ db: database.db, chain: { ...chain, feeBump: { afterMs: 600_000, bumpPercent: 15, maxFeePerGas: 10n ** 12n } }, signer });
        assert.deepEqual(
          (await restarted.reconcile()).map((r) => [r.attempt, r.status]),
          [[1, 'sent']],
        );
        assert.equal(
          await client.getTransaction({ hash: rows[1]!.txHash }).then(
            () => true,
            () => false,
          ),
          true,
        );
        await setAutomine(dev.rpcUrl, true);
        await mine(dev.rpcUrl, 2);
        const [rec] = await reconcileSettled(restarted);
        assert.deepEqual([rec?.attempt, rec?.status, rec?.txHash], [1, 'confirmed', m[1]]);
        assert.deepEqual(
          (await settlementAttempts(database.db, chain.chainId, order.orderId, 'settle')).map((r) => r.status),
          ['replaced', 'confirmed'],
        );
      } finally {
        await setAutomine(dev.rpcUrl, true);
      }
      assert.equal(await executorNonce(), before + 1, 'exactly one transaction');
      assert.equal(await balance(order.payee), AMOUNT, 'paid once');
      assert.equal(await orderState(order.orderId), 1, 'Settled on chain');
    });
  }
});
