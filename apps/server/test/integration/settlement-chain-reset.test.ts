// The executor survives the chain it talks to being replaced under the same chain id (the dev
// profile's anvil after a restart of `npm start`): the database remembers the executor at nonce 6
// with a transaction still unsent, the new chain knows nonce 0. Before migration 0025 the next
// settlement was signed with nonce 8 and waited forever; now the old chain's unfinished row fails
// with a reason naming the reset and settlements on the new chain confirm from nonce 0. Both ways a
// reset shows: a new genesis block, and (same genesis) the chain's nonce below a confirmed one.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { rpcRequest, startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig, SettlementSigner } from '../../src/config/schema.ts';
import { SettlementExecutor, type SettleRequest } from '../../src/settlement/executor.ts';
import { settlementAttempts } from '../../src/settlement/repo.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { withSettlement } from '../helpers/settlement.ts';
import { chainConfigOf } from './watcher-fixtures.ts';

const AMOUNT = 1_000_000n;
let nextChainId = 47_100;

for (const backend of backends()) {
  describe(`executor across a chain reset under the same chain id (${backend})`, () => {
    let database: TestDatabase;
    const chains: DevChain[] = [];

    before(async () => {
      database = await openTestDatabase(backend);
    });
    after(async () => {
      await Promise.all(chains.map((c) => c.stop()));
      await database?.drop();
    });

    async function chainAt(chainId: number): Promise<{ dev: DevChain; chain: ChainConfig; signer: SettlementSigner }> {
      const dev = await startDevChain({ chainId });
      chains.push(dev);
      const setup = await withSettlement(dev, chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 1 }));
      return { dev, ...setup };
    }

    async function paidOrder(dev: DevChain, chain: ChainConfig): Promise<SettleRequest> {
      const payer = dev.payers[0]!;
      const usdc = dev.tokens[0]!.address;
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: chain.settlementContract!, amount: AMOUNT });
      assert.equal((await createPublicClient({ transport: http(dev.rpcUrl) }).waitForTransactionReceipt({ hash })).status, 'success');
      const payee = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
      return { orderId: `ord_${randomBytes(10).toString('hex')}`, payer: payer.address, token: usdc, amount: AMOUNT, payee };
    }

    const nonceOf = (dev: DevChain, who: Hex) => createPublicClient({ transport: http(dev.rpcUrl) }).getTransactionCount({ address: who });

    /** Old chain: one settlement confirmed at nonce 6, one more recorded (nonce 7) but never sent. */
    async function historyOnOldChain(chainId: number): Promise<{ unsent: { orderId: string }; genesisTime: bigint }> {
      const a = await chainAt(chainId);
      const genesisTime = (await createPublicClient({ transport: http(a.dev.rpcUrl) }).getBlock({ blockNumber: 0n })).timestamp;
      await rpcRequest(a.dev.rpcUrl, 'anvil_setNonce', [a.signer.executorAddress, '0x6']);
      const ex = new SettlementExecutor({ db: database.db, chain: a.chain, signer: a.signer });
      const done = await ex.settle(await paidOrder(a.dev, a.chain), { pollMs: 50 });
      assert.ok(done.kind === 'recorded' && done.record.status === 'confirmed', JSON.stringify(done));
      assert.equal(done.record.nonce, 6);
      const req = await paidOrder(a.dev, a.chain);
      const unsent = await ex.prepare(req);
      assert.ok(unsent.kind === 'recorded' && unsent.record.nonce === 7 && unsent.record.status === 'pending');
      return { unsent: req, genesisTime };
    }

    async function settlesOnNewChain(b: { dev: DevChain; chain: ChainConfig; signer: SettlementSigner }, unsentOrder: string): Promise<void> {
      assert.equal(await nonceOf(b.dev, b.signer.executorAddress), 0, 'a fresh chain');
      // A restarted process: a new executor on the same database. Its first tick reconciles.
      const ex = new SettlementExecutor({ db: database.db, chain: b.chain, signer: b.signer });
      await ex.reconcile();
      const [old] = await settlementAttempts(database.db, b.chain.chainId, unsentOrder, 'settle');
      assert.equal(old?.status, 'failed', "the old chain's unsent transaction is not sent to the new chain");
      assert.match(old?.failureReason ?? '', /^chain reset: /);
      const out = await ex.settle(await paidOrder(b.dev, b.chain), { pollMs: 50, timeoutMs: 30_000 });
      assert.ok(out.kind === 'recorded', JSON.stringify(out));
      assert.equal(out.record.status, 'confirmed', JSON.stringify(out.record));
      assert.equal(out.record.nonce, 0, "the chain's own nonce, not the database's 8");
      const again = await ex.settle(await paidOrder(b.dev, b.chain), { pollMs: 50, timeoutMs: 30_000 });
      assert.ok(again.kind === 'recorded' && again.record.status === 'confirmed' && again.record.nonce === 1);
      assert.equal(await nonceOf(b.dev, b.signer.executorAddress), 2);
    }

    it("a new genesis block: the old chain's unfinished rows fail, nonces start from the chain's", { timeout: 120_000 }, async () => {
      const chainId = nextChainId++;
      const { unsent, genesisTime } = await historyOnOldChain(chainId);
      await chains.pop()!.stop();
      // anvil stamps block 0 with its start time in seconds: the new chain starts in a later second,
      // so its genesis differs (the same genesis is the next test's case).
      while (BigInt(Math.floor(Date.now() / 1000)) <= genesisTime) await new Promise((r) => setTimeout(r, 50));
      const b = await chainAt(chainId);
      const { rows } = await database.db.query<{ genesis: string }>('SELECT genesis FROM executor_epochs WHERE chain_id = $1', [chainId]);
      const g = (await createPublicClient({ transport: http(b.dev.rpcUrl) }).getBlock({ blockNumber: 0n })).hash!;
      assert.notEqual(rows[0]!.genesis, g);
      await settlesOnNewChain(b, unsent.orderId);
      const epochs = await database.db.query<{ genesis: string; epoch: number }>('SELECT genesis, epoch FROM executor_epochs WHERE chain_id = $1', [chainId]);
      assert.deepEqual(
        epochs.rows.map((r) => [r.genesis, Number(r.epoch)]),
        [[g, 1]],
      );
    });

    it("the same genesis but the chain's nonce below a confirmed one: a reset too", { timeout: 120_000 }, async () => {
      const chainId = nextChainId++;
      const { unsent } = await historyOnOldChain(chainId);
      await chains.pop()!.stop();
      const b = await chainAt(chainId);
      // Make the database's recorded genesis the new chain's, as a chain restarted with a fixed
      // genesis (anvil --timestamp, a devnet snapshot) would look.
      const g = (await createPublicClient({ transport: http(b.dev.rpcUrl) }).getBlock({ blockNumber: 0n })).hash!;
      await database.db.query('UPDATE executor_epochs SET genesis = $2 WHERE chain_id = $1', [chainId, g]);
      const ex = new SettlementExecutor({ db: database.db, chain: b.chain, signer: b.signer });
      const out = await ex.settle(await paidOrder(b.dev, b.chain), { pollMs: 50, timeoutMs: 30_000 });
      assert.ok(out.kind === 'recorded' && out.record.status === 'confirmed' && out.record.nonce === 0, JSON.stringify(out));
      const [old] = await settlementAttempts(database.db, chainId, unsent.orderId, 'settle');
      assert.equal(old?.status, 'failed');
      assert.match(old?.failureReason ?? '', /chain's nonce 0 is below our confirmed nonce 6/);
    });
  });
}
