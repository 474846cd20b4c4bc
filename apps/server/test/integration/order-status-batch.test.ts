import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HEADER_NONCE, signedHeaders } from '@tollgate/protocol';
import type { Database, Queryable } from '../../src/db/database.ts';
import { startTollgate } from '../../src/main.ts';
import type { NonceClaim } from '../../src/merchants/credentials.ts';
import { StatusReader } from '../../src/orders/status-batch.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, setupMerchant } from '../helpers/orders.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';

/**
 * getOrderStatus records its nonce and reads the order in one batched statement
 * (orders/status-batch.ts): the same replay protection as a nonce consumed before the read, with
 * one round trip per batch of concurrent reads.
 */
for (const backend of backends()) {
  describe(`signed status reads in batches (${backend})`, () => {
    let s: TestServer;
    let run = 0;
    const count = async (sql: string, params: unknown[] = []) => Number((await s.db.query<{ n: number }>(sql, params)).rows[0]!.n);
    /** Headers of one signed GET that can be sent again as they are (a replay). */
    const fixed = (m: Creds) => signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, now: () => s.clock.now() });
    const createOrders = async (m: Creds, n: number) => {
      const ids: string[] = [];
      for (let k = 0; k < n; k++) {
        const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ dapp_order_id: `st-${++run}`, amount_wei: String(7_000_000 + run) }) });
        assert.equal(r.status, 402, r.text);
        ids.push(r.body.order_id);
      }
      return ids;
    };
    /** A StatusReader of its own on the test database, counting the statements that carry nonces. */
    const countingReader = () => {
      const counter = { statements: 0 };
      const counting = (q: Queryable): Queryable => ({
        query: (sql, params, opts) => {
          if (sql.includes('INSERT INTO request_nonces')) counter.statements++;
          return q.query(sql, params, opts);
        },
        exec: (sql) => q.exec(sql),
      });
      const db: Database = { ...s.db, ...counting(s.db), kind: s.db.kind, transaction: (fn) => s.db.transaction((tx) => fn(counting(tx))), close: async () => {} };
      return { reader: new StatusReader(db), counter };
    };
    const claim = (m: Creds, nonce: string): NonceClaim => ({ apiKey: m.apiKey, nonce, settled: false });

    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()] });
    });
    after(() => s.close());

    it('a signed GET sent again is refused 401 replay_detected, found or not found, and no order is read for it', async () => {
      const m = await setupMerchant(s);
      const [id] = await createOrders(m, 1);
      const found = fixed(m);
      const first = await s.request('GET', `/api/v1/orders/${id}`, { headers: found });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.order_id, id);
      const again = await s.request('GET', `/api/v1/orders/${id}`, { headers: found });
      assert.equal(again.status, 401);
      assert.equal(again.body.code, 'replay_detected');
      assert.equal(again.body.error, 'Replay request detected');
      assert.equal(again.body.order_id, undefined);
      // A 404 used its nonce too, and so did a request refused by the path's schema or its NUL (400).
      for (const [path, status] of [
        ['/api/v1/orders/ord_missing', 404],
        [`/api/v1/orders/${'x'.repeat(65)}`, 400],
        // refused before the handler (a NUL in the path): its nonce is used as well
        ['/api/v1/orders/ord%00x', 400],
      ] as const) {
        const h = fixed(m);
        assert.equal((await s.request('GET', path, { headers: h })).status, status, path);
        const replay = await s.request('GET', path, { headers: h });
        assert.equal(replay.status, 401, `replay of ${path}`);
        assert.equal(replay.body.code, 'replay_detected');
      }
    });

    it('the same signed GET three times at once: one 200, two 401 replay_detected', async () => {
      const m = await setupMerchant(s);
      const [id] = await createOrders(m, 1);
      const h = fixed(m);
      const rs = await Promise.all([0, 1, 2].map(() => s.request('GET', `/api/v1/orders/${id}`, { headers: h })));
      assert.deepEqual(rs.map((r) => r.status).sort(), [200, 401, 401]);
      for (const r of rs.filter((x) => x.status === 401)) assert.equal(r.body.code, 'replay_detected');
      assert.equal(await count('SELECT count(*)::int AS n FROM request_nonces WHERE api_key = $1 AND nonce = $2', [m.apiKey, h[HEADER_NONCE]]), 1);
    });

    it('a nonce used on one gateway is a replay on another gateway of the same database', async () => {
      const m = await setupMerchant(s);
      const [id] = await createOrders(m, 1);
      const other = await startTollgate(s.tg.deps.config, { db: s.db, clock: s.clock, role: 'api', http: { logger: false } });
      try {
        const h = fixed(m);
        assert.equal((await s.request('GET', `/api/v1/orders/${id}`, { headers: h })).status, 200);
        const onOther = await fetch(`${other.url}/api/v1/orders/${id}`, { headers: h });
        assert.equal(onOther.status, 401);
        assert.equal(((await onOther.json()) as { code: string }).code, 'replay_detected');
        // A nonce used by another route (GET /api/v1/merchant, the nonce batcher) is a replay here too.
        const h2 = fixed(m);
        assert.equal((await fetch(`${other.url}/api/v1/merchant`, { headers: h2 })).status, 200);
        const r = await s.request('GET', `/api/v1/orders/${id}`, { headers: h2 });
        assert.equal(r.status, 401);
        assert.equal(r.body.code, 'replay_detected');
      } finally {
        await other.close();
      }
    });

    it('concurrent reads share one statement; each gets its own order, or its own refusal', async () => {
      const m = await setupMerchant(s);
      const ids = await createOrders(m, 12);
      const { reader, counter } = countingReader();
      const used = `used-${++run}-nonce-0000`;
      assert.equal((await reader.read({ merchantId: m.merchantId, orderId: ids[0]!, nonce: claim(m, used) })).kind, 'found');
      assert.equal(counter.statements, 1);
      const claims = ids.map((_, k) => claim(m, `burst-${run}-${k}-nonce`));
      const outs = await Promise.all([
        ...ids.map((id, k) => reader.read({ merchantId: m.merchantId, orderId: id, nonce: claims[k]! })),
        reader.read({ merchantId: m.merchantId, orderId: 'ord_missing', nonce: claim(m, `missing-${run}-nonce`) }),
        reader.read({ merchantId: m.merchantId, orderId: ids[1]!, nonce: claim(m, used) }),
        // Another merchant's order is not found for this merchant, even with a fresh nonce.
        reader.read({ merchantId: 'mer_other', orderId: ids[2]!, nonce: claim(m, `foreign-${run}-nonce`) }),
      ]);
      assert.equal(counter.statements, 2, 'one statement for the burst');
      ids.forEach((id, k) => {
        const o = outs[k]!;
        assert.equal(o.kind, 'found');
        assert.equal(o.kind === 'found' && o.order.id, id);
        assert.ok(claims[k]!.settled);
      });
      assert.deepEqual(
        outs.slice(ids.length).map((o) => o.kind),
        ['not_found', 'replay', 'not_found'],
      );
      assert.equal(await count('SELECT count(*)::int AS n FROM request_nonces WHERE api_key = $1 AND nonce LIKE $2', [m.apiKey, `burst-${run}-%`]), 12);
    });

    it('a revoked key: the read is refused api_key_revoked and its nonce is not recorded', async () => {
      const m = await setupMerchant(s);
      const [id] = await createOrders(m, 1);
      const { reader } = countingReader();
      const revoke = await s.admin('DELETE', `/admin/v1/merchants/${m.merchantId}/api-keys/${m.apiKey}`);
      assert.equal(revoke.status, 200, revoke.text);
      const out = await reader.read({ merchantId: m.merchantId, orderId: id!, nonce: claim(m, `revoked-${++run}-nonce`) });
      assert.equal(out.kind, 'key_revoked');
      assert.equal(await count('SELECT count(*)::int AS n FROM request_nonces WHERE nonce = $1', [`revoked-${run}-nonce`]), 0);
    });
  });
}
