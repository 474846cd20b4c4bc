// A reorg of the settlement block on a real anvil: the executor's transaction is mined, then its
// block is replaced by an empty one (anvil drops the transaction, it does not return to the
// mempool). The executor notices the missing receipt with its nonce still free, sends the same
// bytes again, and the order is settled exactly once, by the same transaction hash.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { orderIdToBytes32, TestTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { mine, reorg, startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig, SettlementSigner } from '../../src/config/schema.ts';
import { SettlementExecutor } from '../../src/settlement/executor.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { withSettlement } from '../helpers/settlement.ts';

const AMOUNT = 3_000_000n;

for (const backend of backends()) {
  describe(`settlement block reorged out (${backend})`, () => {
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
        confirmations: 2,
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

    it('mined, reorged out before finality, re-sent with the same bytes: settled once', async () => {
      const payer = dev.payers[0]!;
      await client.waitForTransactionReceipt({
        hash: await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: chain.settlementContract!, amount: AMOUNT }),
      });
      const payee = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
      const orderId = `ord_${randomBytes(10).toString('hex')}`;
      const ex = new SettlementExecutor({ db: database.db, chain, signer });
      const nonce = await executorNonce();

      const p = await ex.prepare({ orderId, payer: payer.address, token: usdc, amount: AMOUNT, payee });
      assert.equal(p.kind, 'recorded');
      const sent = await ex.broadcast(p.kind === 'recorded' ? p.record : assert.fail());
      assert.equal(sent.status, 'sent');
      const first = await client.waitForTransactionReceipt({ hash: sent.txHash });
      assert.equal(first.status, 'success');
      assert.equal(await balance(payee), AMOUNT);
      // One block deep, finality needs two: still sent.
      assert.equal((await ex.checkReceipt(sent)).status, 'sent');

      // The settlement block is replaced by an empty one: the payout is undone and the nonce free again.
      await reorg(dev.rpcUrl, 1);
      assert.equal(await balance(payee), 0n, 'the reorg undid the payout');
      assert.equal(await executorNonce(), nonce);
      await assert.rejects(client.getTransactionReceipt({ hash: sent.txHash }));

      // The next check finds no receipt with the nonce unused and sends the same bytes again.
      assert.equal((await ex.checkReceipt(sent)).status, 'sent');
      const second = await client.waitForTransactionReceipt({ hash: sent.txHash });
      assert.equal(second.status, 'success');
      assert.notEqual(second.blockHash, first.blockHash, 'mined again, in a new block');
      await mine(dev.rpcUrl, 1);
      const final = await ex.checkReceipt(sent);
      assert.equal(final.status, 'confirmed');
      assert.equal(final.blockNumber, Number(second.blockNumber));
      assert.equal(await balance(payee), AMOUNT, 'paid once');
      assert.equal(await executorNonce(), nonce + 1, 'exactly one executor transaction');
      assert.equal(await client.readContract({ address: chain.settlementContract!, abi: TollgateSettlementArtifact.abi, functionName: 'orderState', args: [orderIdToBytes32(orderId)] }), 1);
    });
  });
}
