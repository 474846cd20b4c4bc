// Two chain watchers on one database (on Postgres: two connection pools, as two processes would
// have), ticking concurrently many times while payments arrive: exactly one leads under a healthy
// lease, and even with a lease so short that both lead at once, no order is confirmed, invoiced or
// charged twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine } from '@tollgate/devchain';
import type { Database } from '../../src/db/database.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { leaseHolder } from '../../src/chain/evm/lease.ts';
import type { ChainWatcher, TickResult } from '../../src/chain/evm/watcher.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { FEE, chainConfigOf, createMerchant, createOrder, getOrderRow, pay, payerAddress, startTestChain, transfersOf, watcherFor } from './watcher-fixtures.ts';

const ORDERS = 6;

for (const backend of backends()) {
  describe(`chain watcher: two watchers, one database (${backend})`, () => {
    let tdb: TestDatabase;
    let second: Database;
    before(async () => {
      tdb = await openTestDatabase(backend);
      // PGlite is one process with one connection: the second watcher shares it. Postgres: a second pool.
      second = backend === 'postgres' ? await openPostgres(tdb.url!, { max: 5 }) : tdb.db;
    });
    after(async () => {
      if (second && second !== tdb.db) await second.close();
      await tdb?.drop();
    });

    async function race(opts: { leaseMs?: number; rounds: number }) {
      const dev = await startTestChain();
      try {
        const db = tdb.db;
        const chain = chainConfigOf(dev);
        const m = await createMerchant(db, chain);
        const watchers: [ChainWatcher, ChainWatcher] = [
          watcherFor(db, chain, { holderId: 'a', rangeSize: 2, ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}) }),
          watcherFor(second, chain, { holderId: 'b', rangeSize: 2, ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}) }),
        ];
        const orders = [];
        for (let i = 0; i < ORDERS; i++) orders.push(await createOrder(db, chain, m, { from: payerAddress(dev, i), amount: 1_500_000n + BigInt(i) }));
        const kinds: Record<'a' | 'b', TickResult['kind'][]> = { a: [], b: [] };
        for (let r = 0; r < opts.rounds; r++) {
          if (r < ORDERS) await pay(dev, r, orders[r]!.pay_to_address as `0x${string}`, 1_500_000n + BigInt(r));
          else await mine(dev.rpcUrl, 1);
          // Several ticks of each in flight together.
          const results = await Promise.all([watchers[0].tick(), watchers[1].tick(), new Promise((res) => setTimeout(res, 1)).then(() => watchers[1].tick()), watchers[0].tick()]);
          kinds.a.push(results[0].kind, results[3].kind);
          kinds.b.push(results[1].kind, results[2].kind);
          for (const x of results) if (x.kind === 'error') assert.fail(`tick failed: ${x.error}`);
        }
        return { dev, chain, m, orders, kinds, watchers };
      } catch (err) {
        await dev.stop();
        throw err;
      }
    }

    async function assertNothingTwice(r: Awaited<ReturnType<typeof race>>) {
      const db = tdb.db;
      for (const o of r.orders) {
        assert.equal((await getOrderRow(db, o.id)).status, 'INVOICED', o.id);
        const { rows } = await db.query<{ to_status: string; n: number }>('SELECT to_status, count(*)::int AS n FROM order_transitions WHERE order_id = $1 GROUP BY to_status', [o.id]);
        assert.equal(rows.find((x) => x.to_status === 'INVOICED')?.n, 1, `one INVOICED transition for ${o.id}`);
        for (const x of rows) assert.equal(x.n, 1, `${x.to_status} once for ${o.id}`);
        const { rows: caps } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fee_ledger WHERE order_id = $1 AND kind = 'capture'`, [o.id]);
        assert.equal(caps[0]!.n, 1, `one capture for ${o.id}`);
      }
      const trs = await transfersOf(db, r.chain.chainId);
      assert.equal(trs.length, ORDERS, 'each payment recorded once');
      assert.ok(trs.every((t) => t.match_status === 'matched'));
      assert.equal((await getFeeBalance(db, r.m.id))!.captured, BigInt(ORDERS) * FEE);
      assert.deepEqual(await findLedgerImbalances(db), []);
    }

    it('only one watcher leads while its lease is renewed; payments are confirmed once', async () => {
      const r = await race({ rounds: ORDERS + 6 });
      try {
        const leaders = (['a', 'b'] as const).filter((k) => r.kinds[k].includes('leader'));
        assert.equal(leaders.length, 1, `exactly one leader: ${JSON.stringify(r.kinds)}`);
        const leader = leaders[0]!;
        assert.ok(r.kinds[leader === 'a' ? 'b' : 'a'].every((k) => k === 'follower'));
        assert.equal(await leaseHolder(tdb.db, r.chain.chainId), leader);
        await assertNothingTwice(r);
      } finally {
        await r.dev.stop();
      }
    });

    it('with a lease too short to hold, both lead at times and still nothing is confirmed twice', async () => {
      const r = await race({ rounds: ORDERS + 10, leaseMs: 1 });
      try {
        assert.ok(r.kinds.a.includes('leader') && r.kinds.b.includes('leader'), `both led at times: ${JSON.stringify(r.kinds)}`);
        // Drain: keep both ticking until every order is final.
        for (let i = 0; i < 20; i++) {
          await Promise.all([r.watchers[0].tick(), r.watchers[1].tick()]);
          const { rows } = await tdb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE chain_id = $1 AND status <> 'INVOICED'`, [r.chain.chainId]);
          if (rows[0]!.n === 0) break;
          await mine(r.dev.rpcUrl, 1);
        }
        await assertNothingTwice(r);
      } finally {
        await r.dev.stop();
      }
    });
  });
}
