import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { systemClock } from '../../src/clock.ts';
import { dispatchOnce, startWebhookDispatcher, type DispatchDeps } from '../../src/webhooks/dispatcher.ts';
import { emitEvent } from '../../src/webhooks/outbox.ts';
import { backends } from '../helpers/db.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { createEndpoint, Receiver, startApiOnly } from './webhook-fixtures.ts';

/**
 * Several dispatchers on one database never send one attempt twice. On Postgres each dispatcher
 * has its own connection pool (as separate processes would); PGlite is one connection, so there
 * the loops only interleave.
 */
for (const backend of backends()) {
  describe(`concurrent webhook dispatchers (${backend})`, () => {
    let s: TestServer;
    let rx: Receiver;
    let m: Creds;
    let otherDb: Database;
    const receipts = new Map<string, number>();

    before(async () => {
      s = await startApiOnly(backend);
      rx = await Receiver.start();
      m = await s.createMerchant();
      otherDb = s.database.url ? await openPostgres(s.database.url, { max: 10 }) : s.db;
      rx.reply = (r) => {
        const key = `${r.headers['x-webhook-delivery']}#${r.headers['x-webhook-attempt']}`;
        receipts.set(key, (receipts.get(key) ?? 0) + 1);
        // first attempt of every delivery fails: retries must not be duplicated either
        return { status: r.headers['x-webhook-attempt'] === '1' ? 500 : 200 };
      };
    });
    after(async () => {
      await rx.close();
      if (otherDb !== s.db) await otherDb.close();
      await s.close();
    });

    async function emitMany(n: number, at: () => Date) {
      for (let i = 0; i < n; i += 50) {
        await s.db.transaction(async (tx) => {
          for (let j = i; j < Math.min(n, i + 50); j++) await emitEvent(tx, { merchantId: m.merchantId, event: 'order.invoiced', payload: { order_id: `ord_${j}` }, clockNow: at() });
        });
      }
    }

    const count = async (sql: string) => (await s.db.query<{ n: number }>(sql)).rows[0]!.n;

    it('two dispatchOnce loops: every delivery is sent once per attempt number and ends delivered', async () => {
      await createEndpoint(s, m, `${rx.url}?e=1`, ['order.invoiced']);
      await createEndpoint(s, m, `${rx.url}?e=2`, ['order.invoiced']);
      await emitMany(300, () => new Date(s.clock.now()));
      const total = 600;
      const loop = async (deps: DispatchDeps, workerId: string) => {
        for (let idle = 0; idle < 3; ) {
          const r = await dispatchOnce(deps, { workerId, batchSize: 40, timeoutMs: 2000, random: () => 0.5 });
          if (r.claimed > 0) idle = 0;
          else {
            idle++;
            s.clock.advance(11); // the retries (10 s) become due
          }
        }
      };
      await Promise.all([loop(s.tg.deps, 'dispatcher-a'), loop({ ...s.tg.deps, db: otherDb }, 'dispatcher-b')]);

      const dup = [...receipts].filter(([, n]) => n > 1);
      assert.deepEqual(dup, [], 'no (delivery, attempt) received twice');
      assert.equal(receipts.size, 2 * total, 'attempt 1 and attempt 2 of every delivery');
      assert.equal(await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered' AND attempt_count = 2`), total);
      assert.equal(await count('SELECT count(*)::int AS n FROM webhook_attempts'), 2 * total);
      const workers = await s.db.query<{ locked_by: string | null }>('SELECT DISTINCT locked_by FROM webhook_deliveries');
      assert.deepEqual(workers.rows, [{ locked_by: null }], 'every claim released');
    });

    it('two pipeline workers (startWebhookDispatcher) share the queue without double sends', async () => {
      receipts.clear();
      await s.db.query('DELETE FROM webhook_attempts');
      await s.db.query('DELETE FROM webhook_deliveries');
      rx.reply = (r) => {
        const key = `${r.headers['x-webhook-delivery']}#${r.headers['x-webhook-attempt']}`;
        receipts.set(key, (receipts.get(key) ?? 0) + 1);
        return { status: 200 };
      };
      // Workers run on wall-clock time, like in production.
      const a = startWebhookDispatcher({ ...s.tg.deps, clock: systemClock }, { workerId: 'worker-a', batchSize: 50, maxInFlight: 100 });
      const b = startWebhookDispatcher({ ...s.tg.deps, db: otherDb, clock: systemClock }, { workerId: 'worker-b', batchSize: 50, maxInFlight: 100 });
      try {
        await emitMany(250, () => new Date());
        const deadline = Date.now() + 20_000;
        while ((await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`)) < 500 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
      assert.equal(await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered' AND attempt_count = 1`), 500);
      assert.deepEqual(
        [...receipts].filter(([, n]) => n > 1),
        [],
      );
      assert.equal(receipts.size, 500);
    });
  });
}
