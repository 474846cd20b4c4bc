// Chain watcher across restarts and RPC trouble, on every database backend: a new watcher instance
// continues from the saved cursor across several small ranges and misses nothing; an RPC endpoint
// that goes away (closed port) makes ticks fail as values, never throws, and the watcher catches up
// when it returns; a node refusing large eth_getLogs ranges makes the watcher shrink its range.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { mine, startDevChain, type DevChain } from '@tollgate/devchain';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { runChainWatcher } from '../../src/chain/evm/watcher.ts';
import { leaseHolder } from '../../src/chain/evm/lease.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { FEE, chainConfigOf, createMerchant, createOrder, getOrderRow, pay, payerAddress, startTestChain, tickOk, tickUntilCaughtUp, transfersOf, transitionsOf, watcherFor } from './watcher-fixtures.ts';

/**
 * A JSON-RPC pass-through to anvil that can be switched off (its port closed: connection refused)
 * and on again on the same port, and that can refuse eth_getLogs over more than `maxLogsRange`
 * blocks the way Infura does.
 */
class RpcProxy {
  private server: Server | undefined;
  port = 0;
  maxLogsRange: number | undefined;
  getLogsCalls = 0;
  private readonly upstream: string;
  constructor(upstream: string) {
    this.upstream = upstream;
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const msg = JSON.parse(body) as { id: number; method: string; params: { fromBlock: string; toBlock: string }[] };
    if (msg.method === 'eth_getLogs') {
      this.getLogsCalls++;
      const p = msg.params[0]!;
      if (this.maxLogsRange !== undefined && Number(BigInt(p.toBlock) - BigInt(p.fromBlock)) + 1 > this.maxLogsRange) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32005, message: 'query returned more than 10000 results' } }));
        return;
      }
    }
    try {
      const up = await fetch(this.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(up.status, { 'content-type': 'application/json' });
      res.end(await up.text());
    } catch {
      res.destroy();
    }
  }
}

for (const backend of backends()) {
  describe(`chain watcher: restarts and RPC outages (${backend})`, () => {
    let tdb: TestDatabase;
    before(async () => {
      tdb = await openTestDatabase(backend);
    });
    after(async () => {
      await tdb?.drop();
    });

    async function withChain(fn: (dev: DevChain) => Promise<void>) {
      const dev = await startTestChain();
      try {
        await fn(dev);
      } finally {
        await dev.stop();
      }
    }

    it('a new watcher instance resumes from the saved cursor across several ranges and loses nothing', () =>
      withChain(async (dev) => {
        const db = tdb.db;
        const chain = chainConfigOf(dev);
        const m = await createMerchant(db, chain);
        // Small ranges and a tiny tick budget so the catch-up spans many ranges and ticks; a short lease
        // so the second instance can take over from the first, which "crashes" without releasing it.
        const opts = { rangeSize: 3, maxRangesPerTick: 2, leaseMs: 1_000 };
        const first = watcherFor(db, chain, { ...opts, holderId: 'first' });
        const second = watcherFor(db, chain, { ...opts, holderId: 'second' });
        await tickUntilCaughtUp(first);
        assert.equal((await second.tick()).kind, 'follower', 'a live lease keeps the second instance out');

        const orders = [];
        for (let i = 0; i < 6; i++) orders.push(await createOrder(db, chain, m, { from: payerAddress(dev, i), amount: 1_000_000n + BigInt(i) }));
        // Three payments while the first instance runs…
        for (let i = 0; i < 3; i++) {
          await pay(dev, i, m.wallet, 1_000_000n + BigInt(i));
          await mine(dev.rpcUrl, 2);
          await first.tick();
        }
        // …it dies (no release); three more payments, spread over blocks, while nothing watches.
        for (let i = 3; i < 6; i++) {
          await pay(dev, i, m.wallet, 1_000_000n + BigInt(i));
          await mine(dev.rpcUrl, 2);
        }
        // The dead leader's lease lapses (database time) and the second instance takes over.
        const deadline = Date.now() + 10_000;
        let takeover = await second.tick();
        while (takeover.kind === 'follower') {
          assert.ok(Date.now() < deadline, 'second instance takes over a lapsed lease');
          await new Promise((r) => setTimeout(r, 100));
          takeover = await second.tick();
        }
        assert.ok(takeover.kind === 'leader' && !takeover.caughtUp, 'the catch-up needs more than one tick');
        await tickUntilCaughtUp(second);
        assert.equal(await leaseHolder(db, chain.chainId), 'second');

        await mine(dev.rpcUrl, chain.finalityConfirmations);
        await tickUntilCaughtUp(second);
        for (const o of orders) assert.equal((await getOrderRow(db, o.id)).status, 'INVOICED', o.id);
        const trs = await transfersOf(db, chain.chainId);
        assert.equal(trs.length, 6);
        assert.ok(trs.every((t) => t.match_status === 'matched' && t.orphaned_at === null));
        assert.equal((await getFeeBalance(db, m.id))!.captured, 6n * FEE);
        assert.deepEqual(await findLedgerImbalances(db), []);
      }));

    it('a dev chain restarted under a kept database (same chain id, new genesis) is rescanned from its start', async () => {
      const db = tdb.db;
      const devA = await startTestChain();
      const startedA = Date.now();
      let devB: DevChain | undefined;
      try {
        const chainA = chainConfigOf(devA);
        const m = await createMerchant(db, chainA);
        const wA = watcherFor(db, chainA);
        await tickOk(wA);
        const order = await createOrder(db, chainA, m, { from: payerAddress(devA, 0), amount: 3_300_000n });
        await pay(devA, 0, m.wallet, 3_300_000n);
        await mine(devA.rpcUrl, 1);
        await tickOk(wA);
        assert.equal((await getOrderRow(db, order.id)).status, 'PAYMENT_CONFIRMED');
        await wA.release();
        await devA.stop();

        // Anvil's genesis hash covers its timestamp (seconds): start the new chain in a later second.
        await new Promise((r) => setTimeout(r, Math.max(0, 1_100 - (Date.now() - startedA))));
        devB = await startDevChain({ chainId: devA.chainId });
        const chainB = chainConfigOf(devB);
        assert.deepEqual(chainB.tokens, chainA.tokens, 'same deterministic token addresses');
        const wB = watcherFor(db, chainB);
        const r = await tickOk(wB);
        assert.equal(r.reorgs, 1);
        assert.equal(r.orphaned, 1);
        assert.ok(r.caughtUp);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        assert.equal(o.transfer_id, null);
        assert.deepEqual(
          (await transitionsOf(db, order.id)).map((t) => t.trigger),
          ['confirm', 'orphan'],
        );

        await pay(devB, 0, m.wallet, 3_300_000n);
        await mine(devB.rpcUrl, chainB.finalityConfirmations - 1);
        await tickOk(wB);
        assert.equal((await getOrderRow(db, order.id)).status, 'INVOICED');
        assert.deepEqual(await findLedgerImbalances(db), []);
      } finally {
        await devA.stop();
        await devB?.stop();
      }
    });

    it('an RPC outage fails ticks as values, then the watcher catches up', () =>
      withChain(async (dev) => {
        const db = tdb.db;
        const proxy = new RpcProxy(dev.rpcUrl);
        await proxy.up();
        try {
          const chain = chainConfigOf(dev, { rpcUrl: proxy.url });
          const m = await createMerchant(db, chain);
          const w = watcherFor(db, chain);
          assert.equal((await w.tick()).kind, 'leader');

          await proxy.down();
          const order = await createOrder(db, chain, m, { from: payerAddress(dev, 0), amount: 7_000_000n });
          await pay(dev, 0, m.wallet, 7_000_000n);
          await mine(dev.rpcUrl, 3);
          for (let i = 0; i < 3; i++) {
            const r = await w.tick();
            assert.equal(r.kind, 'error');
            assert.ok(r.kind === 'error' && !r.error.includes(`:${proxy.port}`), `no RPC URL in the error: ${r.kind === 'error' && r.error}`);
          }
          assert.equal((await getOrderRow(db, order.id)).transfer_id, null);

          await proxy.up();
          await tickUntilCaughtUp(w);
          assert.equal((await getOrderRow(db, order.id)).status, 'INVOICED');
        } finally {
          await proxy.down();
        }
      }));

    it('the watcher loop survives an outage at start-up and stops cleanly', () =>
      withChain(async (dev) => {
        const db = tdb.db;
        const proxy = new RpcProxy(dev.rpcUrl);
        await proxy.up();
        await proxy.down(); // the port is known but closed
        const chain = chainConfigOf(dev, { rpcUrl: proxy.url, finalityConfirmations: 2, confirmations: 1 });
        const m = await createMerchant(db, chain);
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 1), amount: 8_000_000n });
        const worker = runChainWatcher(watcherFor(db, chain));
        try {
          await new Promise((r) => setTimeout(r, 300));
          await pay(dev, 1, m.wallet, 8_000_000n);
          await mine(dev.rpcUrl, 1);
          await proxy.up();
          const deadline = Date.now() + 10_000;
          while ((await getOrderRow(db, order.id)).status !== 'INVOICED') {
            assert.ok(Date.now() < deadline, 'order invoiced after the RPC came back');
            await new Promise((r) => setTimeout(r, 50));
          }
        } finally {
          await worker.stop();
          await proxy.down();
        }
        assert.equal(await leaseHolder(db, chain.chainId), undefined, 'lease released on stop');
      }));

    it('shrinks the eth_getLogs range when the node refuses it', () =>
      withChain(async (dev) => {
        const db = tdb.db;
        const proxy = new RpcProxy(dev.rpcUrl);
        await proxy.up();
        try {
          const chain = chainConfigOf(dev, { rpcUrl: proxy.url });
          const m = await createMerchant(db, chain);
          const w = watcherFor(db, chain, { rangeSize: 64 });
          await w.tick();
          const orders = [];
          for (let i = 0; i < 3; i++) {
            orders.push(await createOrder(db, chain, m, { from: payerAddress(dev, i), amount: 9_000_000n }));
            await pay(dev, i, m.wallet, 9_000_000n);
            await mine(dev.rpcUrl, 5);
          }
          proxy.maxLogsRange = 5;
          await tickUntilCaughtUp(w);
          assert.ok(w.rangeSize <= 5, `range shrank to ${w.rangeSize}`);
          for (const o of orders) assert.ok((await getOrderRow(db, o.id)).transfer_id, o.id);
        } finally {
          await proxy.down();
        }
      }));
  });
}
