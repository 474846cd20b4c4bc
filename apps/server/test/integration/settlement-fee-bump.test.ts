// Fee bumping on a real anvil with the real TollgateSettlement: a settlement left unmined (automine
// off) past `fee_bump.after_seconds` is replaced by a transaction with the SAME nonce and ≥ +15 %
// fees, recorded before it is sent; the replacement is mined, the original marked replaced, the
// order paid once. The cap stops bumping (one metric event, one log line without secrets). After a
// reorg that mines the ORIGINAL instead of the replacement, the original is the one applied.
// The kill -9 between recording a replacement and sending it: settlement-kill.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { orderIdToBytes32, TestTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { mine, reorg, setAutomine, startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import { createPublicClient, http, parseTransaction, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig, FeeBumpConfig, SettlementSigner } from '../../src/config/schema.ts';
import { SettlementExecutor, type SettleRequest } from '../../src/settlement/executor.ts';
import { observeFeeBumps, type FeeBumpEvent } from '../../src/settlement/fee-bump.ts';
import { settlementAttempts } from '../../src/settlement/repo.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { withSettlement } from '../helpers/settlement.ts';
import { sleep } from '../helpers/wait.ts';

const AMOUNT = 1_750_000n;
const BUMP: FeeBumpConfig = { afterMs: 300, bumpPercent: 15, maxFeePerGas: 10n ** 12n };

for (const backend of backends()) {
  describe(`settlement fee bumping (${backend})`, () => {
    let dev: DevChain;
    let database: TestDatabase;
    let chain: ChainConfig;
    let signer: SettlementSigner;
    let usdc: Hex;
    let client: ReturnType<typeof createPublicClient>;

    before(async () => {
      dev = await startDevChain();
      database = await openTestDatabase(backend);
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
    afterEach(async () => {
      await setAutomine(dev.rpcUrl, true);
    });
    after(async () => {
      await database?.drop();
      await dev?.stop();
    });

    const balance = (who: Hex) => client.readContract({ address: usdc, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });
    const executorNonce = () => client.getTransactionCount({ address: signer.executorAddress });
    const orderState = (orderId: string) => client.readContract({ address: chain.settlementContract!, abi: TollgateSettlementArtifact.abi, functionName: 'orderState', args: [orderIdToBytes32(orderId)] });
    const attempts = (orderId: string) => settlementAttempts(database.db, chain.chainId, orderId, 'settle');
    const fees = (raw: Hex) => {
      const t = parseTransaction(raw);
      return { max: t.maxFeePerGas!, tip: t.maxPriorityFeePerGas!, nonce: t.nonce!, gas: t.gas!, data: t.data, to: t.to };
    };
    const hasReceipt = (hash: Hex) =>
      client.getTransactionReceipt({ hash }).then(
        () => true,
        () => false,
      );

    /** Pays the pool (mined), then turns automine off: what the executor sends next waits in the mempool. */
    async function paidOrder(): Promise<SettleRequest> {
      const payer = dev.payers[0]!;
      await client.waitForTransactionReceipt({
        hash: await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: chain.settlementContract!, amount: AMOUNT }),
      });
      await setAutomine(dev.rpcUrl, false);
      return { orderId: `ord_${randomBytes(10).toString('hex')}`, payer: payer.address, token: usdc, amount: AMOUNT, payee: privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address };
    }

    /** Records and sends the first attempt (unmined: automine is off). */
    async function stuck(ex: SettlementExecutor, req: SettleRequest) {
      const p = await ex.prepare(req);
      assert.equal(p.kind, 'recorded');
      const sent = await ex.broadcast(p.kind === 'recorded' ? p.record : assert.fail());
      assert.equal(sent.status, 'sent');
      return sent;
    }

    it('a stuck settlement is replaced (same nonce, ≥ +15 % fees, recorded first); the replacement is mined and applied, the original replaced', async () => {
      const ex = new SettlementExecutor({ db: database.db, chain: { ...chain, feeBump: BUMP }, signer });
      const req = await paidOrder();
      const nonce = await executorNonce();
      const original = await stuck(ex, req);
      const events: FeeBumpEvent[] = [];
      const unobserve = observeFeeBumps((e) => events.push(e));
      try {
        // Younger than after_seconds: sent again as it is, not replaced.
        assert.deepEqual(
          (await ex.reconcile()).map((r) => [r.attempt, r.status]),
          [[0, 'sent']],
        );
        await sleep(BUMP.afterMs + 100);
        const [bumped] = await ex.reconcile();
        assert.equal(bumped!.attempt, 1);
        assert.equal(bumped!.status, 'sent');
        assert.deepEqual(events, [{ chainId: chain.chainId, kind: 'settle', outcome: 'bumped' }]);
        const a = fees(original.rawTx);
        const b = fees(bumped!.rawTx);
        assert.equal(b.nonce, a.nonce, 'the same nonce: at most one of the two can be mined');
        assert.equal(b.nonce, nonce);
        assert.deepEqual([b.to, b.data, b.gas], [a.to, a.data, a.gas], 'the same call');
        assert.ok(b.max * 100n >= a.max * 115n, `maxFeePerGas ${a.max} → ${b.max}`);
        assert.ok(b.tip * 100n >= a.tip * 115n, `maxPriorityFeePerGas ${a.tip} → ${b.tip}`);
        assert.deepEqual(
          (await attempts(req.orderId)).map((r) => [r.attempt, r.status]),
          [
            [0, 'sent'],
            [1, 'sent'],
          ],
        );
      } finally {
        unobserve();
      }

      await mine(dev.rpcUrl, 1);
      const rows = await attempts(req.orderId);
      assert.equal(await hasReceipt(rows[1]!.txHash), true, 'the replacement was mined');
      assert.equal(await hasReceipt(rows[0]!.txHash), false, 'the original was not');
      await mine(dev.rpcUrl, 1);
      const final = await ex.checkReceipt(original);
      assert.deepEqual([final.attempt, final.status], [1, 'confirmed']);
      assert.deepEqual(
        (await attempts(req.orderId)).map((r) => [r.attempt, r.status]),
        [
          [0, 'replaced'],
          [1, 'confirmed'],
        ],
      );
      assert.deepEqual(await ex.reconcile(), [], 'nothing left to do');
      assert.equal(await balance(req.payee), AMOUNT, 'paid once');
      assert.equal(await executorNonce(), nonce + 1, 'one executor transaction mined');
      assert.equal(await orderState(req.orderId), 1);
    });

    it('the cap stops bumping: no replacement, one capped event and log line (no key, no raw transaction); the original is still applied', async () => {
      const req = await paidOrder();
      const probe = new SettlementExecutor({ db: database.db, chain, signer });
      const original = await stuck(probe, req);
      // A cap at the original's own fee: +15 % is over it.
      const capped = new SettlementExecutor({ db: database.db, chain: { ...chain, feeBump: { ...BUMP, maxFeePerGas: fees(original.rawTx).max } }, signer });
      await sleep(BUMP.afterMs + 100);
      const events: FeeBumpEvent[] = [];
      const lines: string[] = [];
      const unobserve = observeFeeBumps((e) => events.push(e));
      // The process logger (log.ts) writes its JSON lines to stderr.
      const write = process.stderr.write;
      process.stderr.write = ((chunk: string | Uint8Array) => lines.push(String(chunk)) > 0) as typeof process.stderr.write;
      try {
        for (let i = 0; i < 3; i++)
          assert.deepEqual(
            (await capped.reconcile()).map((r) => [r.attempt, r.status]),
            [[0, 'sent']],
          );
      } finally {
        process.stderr.write = write;
        unobserve();
      }
      assert.deepEqual(events, [{ chainId: chain.chainId, kind: 'settle', outcome: 'capped' }], 'counted once, not once per pass');
      const logged = lines.filter((l) => l.includes('fee_bump.max_fee_per_gas'));
      assert.equal(logged.length, 1, lines.join('\n'));
      const line = JSON.parse(logged[0]!) as Record<string, unknown>;
      assert.equal(line.level, 40);
      assert.equal(line.tx_hash, original.txHash);
      assert.equal(line.max_fee_per_gas, fees(original.rawTx).max.toString());
      assert.ok(!logged[0]!.includes(original.rawTx.slice(2, 60)), 'no raw transaction');
      assert.ok(!logged[0]!.toLowerCase().includes(signer.privateKey().slice(2).toLowerCase()), 'no key');
      assert.equal((await attempts(req.orderId)).length, 1, 'nothing recorded beyond the original');

      await mine(dev.rpcUrl, 2);
      const final = await capped.checkReceipt(original);
      assert.deepEqual([final.attempt, final.status], [0, 'confirmed']);
      assert.equal(await balance(req.payee), AMOUNT);
    });

    it('a reorg that mines the original instead of the replacement: the original is applied, the replacement replaced, paid once', async () => {
      // Final at 2 blocks (as the shared executor counts finality): one block deep is not final.
      const ex = new SettlementExecutor({ db: database.db, chain: { ...chain, confirmations: 2, feeBump: BUMP }, signer });
      const req = await paidOrder();
      const nonce = await executorNonce();
      const original = await stuck(ex, req);
      await sleep(BUMP.afterMs + 100);
      const [bumped] = await ex.reconcile();
      assert.equal(bumped!.attempt, 1);
      await mine(dev.rpcUrl, 1);
      assert.equal(await hasReceipt(bumped!.txHash), true);
      const mined = await ex.checkReceipt(original);
      assert.deepEqual([mined.attempt, mined.status], [1, 'sent'], 'mined, not final yet');

      // The block is replaced by one that carries the ORIGINAL (the lower-fee variant).
      await reorg(dev.rpcUrl, 1, [[original.rawTx, 0]]);
      assert.equal(await hasReceipt(bumped!.txHash), false);
      assert.equal(await hasReceipt(original.txHash), true);
      const swapped = await ex.checkReceipt(original);
      assert.deepEqual([swapped.attempt, swapped.status], [0, 'sent'], 'the original is the mined attempt now');
      await mine(dev.rpcUrl, 1);
      const final = await ex.checkReceipt(bumped!);
      assert.deepEqual([final.attempt, final.status], [0, 'confirmed']);
      assert.deepEqual(
        (await attempts(req.orderId)).map((r) => [r.attempt, r.status]),
        [
          [0, 'confirmed'],
          [1, 'replaced'],
        ],
      );
      assert.equal(await balance(req.payee), AMOUNT, 'paid once');
      assert.equal(await executorNonce(), nonce + 1);
      assert.equal(await orderState(req.orderId), 1);
    });
  });
}
