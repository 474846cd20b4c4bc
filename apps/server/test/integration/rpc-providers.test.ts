// RPC providers as they behave, between Tollgate and anvil: two provider URLs per chain, each a
// fault-injecting proxy (@tollgate/devchain startRpcProxy, real HTTP on loopback) that enforces
// eth_getLogs block-range and result caps in a provider's wording, rate limits with 429 +
// Retry-After, dropped connections, or serves another chain id. What must hold:
//   - the watcher detects every payment once (none missed, none doubled) while the providers
//     refuse its ranges, rate-limit it and drop connections; its range adapts to the caps;
//   - no request reaches a URL before its Retry-After has passed;
//   - a URL answering for another chain id is never used, at start or later;
//   - a URL that failed is used again once it answers (health check), the preferred one first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, rpcRequest, startRpcProxy, type DevChain, type RpcProxy } from '@tollgate/devchain';
import { createPublicClient } from 'viem';
import { chainTransport, rpcPool, RpcUnavailableError } from '../../src/chain/evm/transport.ts';
import { createEvmTxLookup } from '../../src/mpp/chain.ts';
import { ExactEvmChain } from '../../src/x402/exact-evm/chain.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { chainConfigOf, createMerchant, createOrder, pay, payerAddress, startTestChain, transfersOf, transitionsOf, watcherFor } from './watcher-fixtures.ts';

describe('RPC providers between Tollgate and anvil', () => {
  let dev: DevChain;
  const proxies: RpcProxy[] = [];
  const proxy = async (...a: Parameters<typeof startRpcProxy> extends [string, ...infer R] ? R : never) => {
    const p = await startRpcProxy(dev.rpcUrl, ...a);
    proxies.push(p);
    return p;
  };
  /** A chain config over `urls` with its own pool (a fresh chain id key per test). */
  const chainOver = (urls: string[]) => chainConfigOf(dev, { rpcUrl: urls[0]!, rpcUrls: urls });

  before(async () => {
    dev = await startTestChain();
  });
  after(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await dev?.stop();
  });

  for (const backend of backends()) {
    describe(`the watcher keeps its guarantees (${backend})`, () => {
      let database: TestDatabase;
      before(async () => {
        database = await openTestDatabase(backend);
      });
      after(async () => {
        await database?.drop();
      });

      it('range caps, result caps, 429 + Retry-After and drops on two providers: every payment detected once, the range adapts', async () => {
        // Alchemy-like primary: 5-block ranges, 3 results, 10 requests per 10 s (a catch-up needs
        // more, however slow the machine); Infura-like secondary: 8-block ranges, 3 results, and one
        // connection in five dropped.
        const a = await proxy({ limits: { maxLogBlockRange: 5, maxLogResults: 3, style: 'alchemy', rateLimit: { requests: 10, windowMs: 10_000, retryAfterSeconds: 1 } } });
        const b = await proxy({ limits: { maxLogBlockRange: 8, maxLogResults: 3, style: 'infura' }, fault: { mode: 'drop', rate: 0.2 } });
        const chain = chainOver([a.url, b.url]);
        const m = await createMerchant(database.db, chain);
        const w = watcherFor(database.db, chain, { rangeSize: 2000 });
        // The cursor starts at the current head: everything after it is watched.
        await w.tick();
        const orders = [];
        for (let i = 0; i < 12; i++) {
          const amount = 1_000_000n + BigInt(i);
          const o = await createOrder(database.db, chain, m, { from: payerAddress(dev, i % 9), amount });
          await pay(dev, i % 9, m.wallet, amount);
          // Payments close together (result caps) and far apart (range caps).
          if (i % 4 === 3) await mine(dev.rpcUrl, 7);
          orders.push(o);
        }
        await mine(dev.rpcUrl, 5);
        const errors: string[] = [];
        for (let t = 0; t < 200; t++) {
          const r = await w.tick();
          if (r.kind === 'error') errors.push(r.error);
          const statuses = await Promise.all(orders.map(async (o) => (await database.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [o.id])).rows[0]!.status));
          if (r.kind === 'leader' && r.caughtUp && statuses.every((s) => s === 'INVOICED')) break;
          if (r.kind === 'leader' && r.caughtUp) await mine(dev.rpcUrl, 1);
        }
        const transfers = (await transfersOf(database.db, chain.chainId)).filter((t) => !t.orphaned_at);
        assert.equal(transfers.length, orders.length, 'one transfer row per payment');
        for (const o of orders) {
          const tr = await transitionsOf(database.db, o.id);
          assert.deepEqual(
            tr.map((x) => x.to_status),
            ['PAYMENT_CONFIRMED', 'INVOICED'].slice(tr[0]?.to_status === 'INVOICED' ? 1 : 0),
            `${o.id}: confirmed and invoiced once (${JSON.stringify(tr)})`,
          );
          assert.equal(transfers.filter((t) => t.order_id === o.id).length, 1, `${o.id}: matched once`);
        }
        const [sa, sb] = [a.stats(), b.stats()];
        assert.ok(sa.rangeRefused + sb.rangeRefused > 0, 'ranges were refused');
        assert.ok(sa.resultsRefused + sb.resultsRefused > 0, 'results were refused');
        assert.ok(sa.rateLimited > 0, `the primary rate-limited (${JSON.stringify(sa)})`);
        // The sequential test below holds this at exactly 0. Here the watcher has up to 8 requests
        // in flight: one decided before the 429 was read can reach the proxy late on a loaded
        // machine (one seen at a load average of ~27 on 2 cores), so a stray one is tolerated.
        assert.ok(sa.early <= 1, `the primary's Retry-After was honoured (${sa.early} early)`);
        assert.ok(w.rangeSize <= 8, `range adapted to the caps (${w.rangeSize})`);
        assert.ok(errors.length < 60, `ticks mostly succeed (${errors.length} failed)`);
      });
    });
  }

  it('machine-payment lookups (batched) and x402 chain reads through a rate-limited, dropping provider and a spare: the same answers as anvil', async () => {
    // Two requests per 10 s: the probe and the first batch; every lookup needs at least two batches.
    const limited = await proxy({ limits: { rateLimit: { requests: 2, windowMs: 10_000, retryAfterSeconds: 1 } }, fault: { mode: 'drop', rate: 0.3 } });
    const spare = await proxy({ limits: { rateLimit: { requests: 50, windowMs: 1000, retryAfterSeconds: 1, as: 'rpc-error' } } });
    const chain = chainOver([limited.url, spare.url]);
    const to = '0x00000000000000000000000000000000000b0b01';
    const hashes: `0x${string}`[] = [];
    for (let i = 0; i < 4; i++) hashes.push(await pay(dev, i, to, 1_000n + BigInt(i)));
    const lookup = createEvmTxLookup(chain, 2_000);
    // 40 concurrent verifies of 4 transactions (as concurrent MPP verifies send them): all answered
    // from the chain, each with its one transfer; a failure would be a 503 to the client, retried.
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await lookup.getMinedTransfers(hashes[i % 4]!);
          } catch (err) {
            if (attempt >= 5) throw err;
          }
        }
      }),
    );
    answers.forEach((a, i) => {
      assert.equal(a?.status, 'success');
      assert.deepEqual(
        a!.transfers.map((t) => [t.to, t.value]),
        [[to, 1_000n + BigInt(i % 4)]],
      );
    });
    const x402 = new ExactEvmChain(chain);
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address;
    assert.deepEqual(await x402.domainOf(usdc), { name: 'USD Coin', version: '2' });
    assert.equal(limited.stats().early, 0);
    assert.equal(spare.stats().early, 0);
    assert.ok(Object.values(spare.stats().calls).reduce((a, b) => a + b, 0) > (spare.stats().calls.eth_chainId ?? 0), `the spare served (${JSON.stringify(spare.stats().calls)})`);
  });

  it('Retry-After is honoured: a short one is waited out inside the request, a long one fails fast without a request', async () => {
    const p = await proxy({ limits: { rateLimit: { requests: 2, windowMs: 1000, retryAfterSeconds: 1 } } });
    const client = createPublicClient({ transport: chainTransport(chainOver([p.url])) });
    const started = Date.now();
    for (let i = 0; i < 5; i++) assert.ok((await client.getBlockNumber({ cacheTime: 0 })) >= 0n);
    assert.ok(p.stats().rateLimited >= 1, JSON.stringify(p.stats()));
    assert.equal(p.stats().early, 0);
    assert.ok(Date.now() - started >= 1000, 'waited for Retry-After');

    const slow = await proxy({ limits: { rateLimit: { requests: 2, windowMs: 60_000, retryAfterSeconds: 30 } } });
    const c2 = createPublicClient({ transport: chainTransport(chainOver([slow.url])) });
    await c2.getBlockNumber({ cacheTime: 0 });
    const t0 = Date.now();
    // The provider's own answer (a 429 with a JSON-RPC body) reaches the caller, whose backoff takes over.
    await assert.rejects(c2.getBlockNumber({ cacheTime: 0 }), (e: unknown) => (e as { code?: number }).code === 429);
    const seen = slow.stats().requests;
    await assert.rejects(c2.getBlockNumber({ cacheTime: 0 }), RpcUnavailableError);
    assert.equal(slow.stats().requests, seen, 'no request during the Retry-After');
    assert.equal(slow.stats().early, 0);
    assert.ok(Date.now() - t0 < 2000, 'failed fast');
  });

  it('a URL answering for another chain id is never used; with no other URL, requests are refused', async () => {
    const wrong = await proxy({ limits: { chainId: 1 } });
    const good = await proxy();
    const client = createPublicClient({ transport: chainTransport(chainOver([wrong.url, good.url])) });
    for (let i = 0; i < 3; i++) await client.getBlockNumber({ cacheTime: 0 });
    assert.deepEqual(Object.keys(wrong.stats().calls), ['eth_chainId'], 'only asked its chain id');
    assert.equal(good.stats().calls.eth_blockNumber, 3);

    const alone = createPublicClient({ transport: chainTransport(chainOver([wrong.url])) });
    await assert.rejects(alone.getBlockNumber({ cacheTime: 0 }), (e: unknown) => e instanceof Error && /no RPC URL serves this chain id/.test(e.message) && (e as RpcUnavailableError).reason === 'wrong-chain');
  });

  it('a URL that turns to another chain id is dropped at its next check; a failed URL is used again once it answers', async () => {
    const first = await proxy();
    const second = await proxy();
    const chain = chainOver([first.url, second.url]);
    rpcPool(chain, { recheckMs: 200 });
    const client = createPublicClient({ transport: chainTransport(chain) });
    await client.getBlockNumber({ cacheTime: 0 });
    assert.equal(first.stats().calls.eth_blockNumber, 1);

    // The preferred URL goes down: the next requests go to the second at once.
    first.set({ mode: 'drop' });
    await client.getBlockNumber({ cacheTime: 0 });
    await client.getBlockNumber({ cacheTime: 0 });
    assert.equal(second.stats().calls.eth_blockNumber, 2);
    // It comes back: after its rest (1 s) it proves its chain id and takes traffic again.
    first.set({ mode: 'pass' });
    const until = Date.now() + 5_000;
    while ((first.stats().calls.eth_blockNumber ?? 0) < 2 && Date.now() < until) {
      await client.getBlockNumber({ cacheTime: 0 });
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(first.stats().calls.eth_blockNumber, 2, 'back in use');
    assert.deepEqual(
      rpcPool(chain)
        .health()
        .map((h) => h.state),
      ['ok', 'ok'],
    );

    // It now answers for another chain: after `recheckMs` it is refused and traffic moves.
    first.limit({ chainId: 1 });
    await new Promise((r) => setTimeout(r, 250));
    const before = first.stats().calls.eth_blockNumber;
    for (let i = 0; i < 3; i++) await client.getBlockNumber({ cacheTime: 0 });
    assert.equal(first.stats().calls.eth_blockNumber, before, 'not used on the wrong chain');
    assert.equal(rpcPool(chain).health()[0]!.state, 'wrong-chain');
    assert.equal(await rpcRequest<string>(dev.rpcUrl, 'eth_chainId', []), `0x${dev.chainId.toString(16)}`);
  });
});
