// The DELEGATE executor on a real anvil with the real TollgateSettlement: an order paid into the
// pool is settled to the merchant wallet exactly once, also when the process "dies" between
// recording and sending, or between sending and confirming; a second attempt is refused by the
// database row and, with the database lost, by the contract itself.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { orderIdToBytes32, TestTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig, SettlementSigner } from '../../src/config/schema.ts';
import { SettlementExecutor, type SettleRequest } from '../../src/settlement/executor.ts';
import { findSettlement } from '../../src/settlement/repo.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startRpcProxy } from '@tollgate/devchain';
import { reconcileSettled, withSettlement } from '../helpers/settlement.ts';

const AMOUNT = 2_500_000n;

for (const backend of backends()) {
  describe(`settlement executor (${backend})`, () => {
    let dev: DevChain;
    let database: TestDatabase;
    let chain: ChainConfig;
    let signer: SettlementSigner;
    let usdc: Hex;
    let client: ReturnType<typeof createPublicClient>;
    const extra: TestDatabase[] = [];

    before(async () => {
      dev = await startDevChain();
      database = await openTestDatabase(backend);
      usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address;
      const setup = await withSettlement(dev, {
        chainId: dev.chainId,
        name: 'Anvil',
        rpcUrl: dev.rpcUrl,
        confirmations: 1,
        finalityConfirmations: 2,
        pollIntervalMs: 100,
        tokens: dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase() as Hex, decimals: t.decimals })),
      });
      chain = setup.chain;
      signer = setup.signer;
      assert.match(chain.settlementContract ?? '', /^0x[0-9a-f]{40}$/, 'deployed because the chain had none');
      client = createPublicClient({ transport: http(dev.rpcUrl) });
    });
    after(async () => {
      for (const d of extra) await d.drop();
      await database?.drop();
      await dev?.stop();
    });

    const executor = (db = database.db) => new SettlementExecutor({ db, chain, signer });
    const balance = (who: Hex) => client.readContract({ address: usdc, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });
    const orderState = (orderId: string) => client.readContract({ address: chain.settlementContract!, abi: TollgateSettlementArtifact.abi, functionName: 'orderState', args: [orderIdToBytes32(orderId)] });
    const executorNonce = () => client.getTransactionCount({ address: signer.executorAddress });

    /** A fresh order whose payer has paid `AMOUNT` into the pool; the merchant wallet is new (balance 0). */
    async function paidOrder(): Promise<SettleRequest> {
      const payer = dev.payers[0]!;
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: chain.settlementContract!, amount: AMOUNT });
      assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
      const merchant = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
      return { orderId: `ord_${randomBytes(10).toString('hex')}`, payer: payer.address, token: usdc, amount: AMOUNT, payee: merchant };
    }

    it('settles a pool payment to the merchant wallet: recorded, sent, confirmed', async () => {
      const req = await paidOrder();
      const out = await executor().settle(req, { pollMs: 50 });
      assert.ok(out.kind === 'recorded', JSON.stringify(out));
      const rec = out.record;
      assert.equal(rec.status, 'confirmed');
      assert.equal(await balance(req.payee), AMOUNT);
      assert.equal(await orderState(req.orderId), 1, 'Settled on chain');
      const receipt = await client.getTransactionReceipt({ hash: rec.txHash });
      assert.equal(receipt.status, 'success');
      assert.equal(Number(receipt.blockNumber), rec.blockNumber);
      const tx = await client.getTransaction({ hash: rec.txHash });
      assert.equal(tx.nonce, rec.nonce);
      assert.equal(tx.from.toLowerCase(), signer.executorAddress.toLowerCase());
      // the gas limit carries the margin over what the settlement really used
      assert.ok(tx.gas > receipt.gasUsed + receipt.gasUsed / 10n, `gas ${tx.gas} vs used ${receipt.gasUsed}`);
    });

    it('refuses in simulation what the contract would revert, and records nothing', async () => {
      const merchant = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
      const req = { orderId: `ord_${randomBytes(10).toString('hex')}`, payer: dev.payers[0]!.address, token: usdc, amount: 10n ** 15n, payee: merchant };
      const nonce = await executorNonce();
      const out = await executor().prepare(req);
      assert.ok(out.kind === 'refused' && out.error === 'InsufficientPool', JSON.stringify(out));
      assert.equal(out.detail, `InsufficientPool(address ${usdc}, uint256 ${await balance(chain.settlementContract!)}, uint256 ${req.amount})`, 'decoded with its arguments');
      assert.equal(await findSettlement(database.db, chain.chainId, req.orderId, 'settle'), undefined);
      assert.equal(await executorNonce(), nonce, 'nothing was sent');
    });

    it('crash after recording, before sending: the restart sends the recorded bytes exactly once', async () => {
      const req = await paidOrder();
      const before = await executorNonce();
      const prepared = await executor().prepare(req);
      assert.equal(prepared.kind, 'recorded');
      assert.ok(prepared.kind === 'recorded');
      assert.equal(prepared.record.status, 'pending');
      assert.equal(await executorNonce(), before, 'nothing on chain yet');
      await assert.rejects(client.getTransactionReceipt({ hash: prepared.record.txHash }));
      // "restart": a new executor on the same database finds the pending row
      const restarted = executor();
      const [rec] = await reconcileSettled(restarted);
      assert.equal(rec?.txHash, prepared.record.txHash, 'the same signed bytes, not a new transaction');
      assert.equal(rec?.status, 'confirmed');
      assert.equal(await balance(req.payee), AMOUNT);
      assert.equal(await executorNonce(), before + 1, 'exactly one transaction');
      assert.deepEqual(await restarted.reconcile(), [], 'nothing left to do');
      assert.equal(await balance(req.payee), AMOUNT);
    });

    it('crash after sending, before recording it: the restart sees the bytes mined and confirms', async () => {
      const req = await paidOrder();
      const prepared = await executor().prepare(req);
      assert.ok(prepared.kind === 'recorded');
      // the dying process got the bytes to the node but not its "sent" mark into the database
      await client.sendRawTransaction({ serializedTransaction: prepared.record.rawTx });
      assert.equal((await findSettlement(database.db, chain.chainId, req.orderId, 'settle'))?.status, 'pending');
      const before = await executorNonce();
      const [rec] = await reconcileSettled(executor());
      assert.equal(rec?.status, 'confirmed');
      assert.equal(await executorNonce(), before, 'the re-broadcast added no transaction');
      assert.equal(await balance(req.payee), AMOUNT);
    });

    it('crash after sending and recording, before confirming: the reconciler confirms', async () => {
      const req = await paidOrder();
      const ex = executor();
      const prepared = await ex.prepare(req);
      assert.ok(prepared.kind === 'recorded');
      const sent = await ex.broadcast(prepared.record);
      assert.equal(sent.status, 'sent');
      const [rec] = await reconcileSettled(executor());
      assert.equal(rec?.status, 'confirmed');
      assert.equal(rec?.blockNumber, Number((await client.getTransactionReceipt({ hash: sent.txHash })).blockNumber));
      assert.equal(await balance(req.payee), AMOUNT);
    });

    it('a second settle of the same order sends nothing; with the database lost, the contract refuses it', async () => {
      const req = await paidOrder();
      const first = await executor().settle(req, { pollMs: 50 });
      assert.ok(first.kind === 'recorded' && first.record.status === 'confirmed');
      // more funds in the pool, so only the once-per-order rule can stop a second payout
      await paidOrder();
      const nonce = await executorNonce();
      const again = await executor().settle(req, { pollMs: 50 });
      assert.equal(again.kind, 'existing');
      assert.ok(again.kind === 'existing');
      assert.equal(again.record.txHash, first.record.txHash);
      assert.equal(await executorNonce(), nonce);
      // a fresh, empty database: nothing remembers the order, the chain does
      const lost = await openTestDatabase(backend);
      extra.push(lost);
      const out = await executor(lost.db).settle(req, { pollMs: 50 });
      assert.ok(out.kind === 'refused' && out.error === 'OrderAlreadyProcessed', JSON.stringify(out));
      assert.equal(await executorNonce(), nonce, 'no transaction was sent');
      assert.equal(await balance(req.payee), AMOUNT, 'paid once');
    });

    it('two executors on different databases (a lost database): the second settlement reverts on chain, paid once', async () => {
      const req = await paidOrder();
      const other = await paidOrder(); // funds for a second payout, so only the once-per-order rule can stop it
      const lost = await openTestDatabase(backend);
      extra.push(lost);
      const [a, b] = [executor(), executor(lost.db)];
      // b records another order first, then this one: it signs nonces N and N+1 while a signs N
      const pa = await a.prepare(req);
      const pbOther = await b.prepare(other);
      const pb = await b.prepare(req);
      assert.ok(pa.kind === 'recorded' && pbOther.kind === 'recorded' && pb.kind === 'recorded', JSON.stringify([pa, pbOther, pb]));
      assert.equal(pbOther.record.nonce, pa.record.nonce);
      assert.equal(pb.record.nonce, pa.record.nonce + 1);
      assert.equal((await reconcileSettled(a))[0]?.status, 'confirmed');
      const rb = await reconcileSettled(b);
      // nonce N went to a's settlement: b's row for it can never be mined
      assert.deepEqual(
        rb.map((r) => [r.orderId, r.status, r.failureReason]),
        [
          [other.orderId, 'failed', 'nonce used by another transaction'],
          // nonce N+1 was mined, and the contract refused the order a second time
          [req.orderId, 'failed', 'reverted on chain'],
        ],
      );
      const receipt = await client.getTransactionReceipt({ hash: pb.record.txHash });
      assert.equal(receipt.status, 'reverted');
      assert.equal(await balance(req.payee), AMOUNT, 'paid once');
      assert.equal(await balance(other.payee), 0n);
    });

    it('RPC faults: a failed broadcast leaves the row pending, a failed receipt read changes nothing; both finish later, once', async () => {
      const proxy = await startRpcProxy(dev.rpcUrl);
      try {
        const ex = new SettlementExecutor({ db: database.db, chain: { ...chain, rpcUrl: proxy.url }, signer, timeoutMs: 2_000 });
        const req = await paidOrder();
        const prepared = await ex.prepare(req);
        assert.ok(prepared.kind === 'recorded');
        const before = await executorNonce();
        for (const mode of ['rpc-error', 'http-500', 'drop'] as const) {
          proxy.set({ mode });
          await assert.rejects(ex.broadcast(prepared.record), `${mode}: the broadcast fails loudly`);
          assert.equal((await findSettlement(database.db, chain.chainId, req.orderId, 'settle'))?.status, 'pending', mode);
          await assert.rejects(ex.reconcile(), mode);
        }
        assert.equal(await executorNonce(), before, 'nothing reached the chain');
        proxy.set({ mode: 'pass' });
        const sent = await ex.broadcast(prepared.record);
        assert.equal(sent.status, 'sent');
        proxy.set({ mode: 'rpc-error' });
        await assert.rejects(ex.checkReceipt(sent));
        assert.equal((await findSettlement(database.db, chain.chainId, req.orderId, 'settle'))?.status, 'sent', 'an RPC fault never fails a row');
        proxy.set({ mode: 'pass' });
        const [rec] = await reconcileSettled(ex);
        assert.equal(rec?.status, 'confirmed');
        assert.equal(await executorNonce(), before + 1);
        assert.equal(await balance(req.payee), AMOUNT);
      } finally {
        await proxy.close();
      }
    });

    it('two RPC providers, the preferred one rate-limited (429 + Retry-After) and dropping connections: five settlements, each sent and paid once', async () => {
      const limited = await startRpcProxy(dev.rpcUrl, { limits: { rateLimit: { requests: 4, windowMs: 1000, retryAfterSeconds: 1 } }, fault: { mode: 'drop', rate: 0.3 } });
      const spare = await startRpcProxy(dev.rpcUrl);
      try {
        const ex = new SettlementExecutor({ db: database.db, chain: { ...chain, rpcUrl: limited.url, rpcUrls: [limited.url, spare.url] }, signer, timeoutMs: 2_000 });
        const reqs: SettleRequest[] = [];
        for (let i = 0; i < 5; i++) reqs.push(await paidOrder()); // one payer: its transfers one after another
        const before = await executorNonce();
        // A failed call leaves the row as it was; the caller (the worker) retries: here, until done.
        const done = await Promise.all(
          reqs.map(async (req) => {
            for (let attempt = 0; attempt < 20; attempt++) {
              try {
                const out = await ex.settle(req, { pollMs: 50 });
                if (out.kind === 'recorded' || out.kind === 'existing') return out;
              } catch {
                /* a provider failure: the row (if recorded) is reconciled below */
              }
            }
            throw new Error(`${req.orderId}: not settled in 20 attempts`);
          }),
        );
        assert.equal(done.length, 5);
        limited.set({ mode: 'pass' }); // the rate limit stays
        await reconcileSettled(ex);
        for (const req of reqs) {
          assert.equal((await findSettlement(database.db, chain.chainId, req.orderId, 'settle'))?.status, 'confirmed', req.orderId);
          assert.equal(await balance(req.payee), AMOUNT, 'paid once');
          assert.equal(await orderState(req.orderId), 1, 'Settled on chain');
        }
        assert.equal(await executorNonce(), before + 5, 'one transaction per settlement');
        assert.ok(limited.stats().rateLimited + (limited.stats().faulted.drop ?? 0) > 0, JSON.stringify(limited.stats()));
        assert.ok((spare.stats().calls.eth_sendRawTransaction ?? 0) + (spare.stats().calls.eth_call ?? 0) > 0, 'the spare served');
        assert.equal(limited.stats().early, 0, 'no request before Retry-After');
      } finally {
        await limited.close();
        await spare.close();
      }
    });

    it('refund: the payer gets the pooled amount back once, and the order can never settle afterwards', async () => {
      const req = await paidOrder();
      const ex = executor();
      const payerBefore = await balance(req.payer);
      const out = await ex.finish(await ex.prepareRefund(req), { pollMs: 50 });
      assert.ok(out.kind === 'recorded' && out.record.status === 'confirmed', JSON.stringify(out));
      assert.equal(out.record.kind, 'refund');
      assert.equal(await balance(req.payer), payerBefore + AMOUNT);
      assert.equal(await orderState(req.orderId), 2, 'Refunded on chain');
      assert.equal((await ex.prepareRefund(req)).kind, 'existing', 'a second refund sends nothing');
      await paidOrder(); // the pool could pay: only the once-per-order rule refuses
      const again = await ex.prepare(req);
      assert.ok(again.kind === 'refused' && again.error === 'OrderAlreadyProcessed', JSON.stringify(again));
      assert.equal(await balance(req.payee), 0n);
    });

    it('concurrent prepares take consecutive nonces', async () => {
      const [a, b] = [await paidOrder(), await paidOrder()];
      const ex = executor();
      const [pa, pb] = await Promise.all([ex.prepare(a), ex.prepare(b)]);
      assert.ok(pa.kind === 'recorded' && pb.kind === 'recorded');
      const [lo, hi] = [pa.record.nonce, pb.record.nonce].sort((x, y) => x - y);
      assert.equal(hi, lo! + 1);
      const done = await reconcileSettled(ex);
      assert.deepEqual(
        done.map((r) => r.status),
        ['confirmed', 'confirmed'],
      );
      assert.equal(await balance(a.payee), AMOUNT);
      assert.equal(await balance(b.payee), AMOUNT);
    });
  });
}
