import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import type { Database, Queryable } from '../../src/db/database.ts';
import { chainOrderPorts } from '../../src/chain/order-ports.ts';
import { evmPaymentPlanner } from '../../src/chain/evm/planner.ts';
import { solanaPaymentPlanner } from '../../src/chain/solana/planner.ts';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { startTollgate } from '../../src/main.ts';
import { MerchantService } from '../../src/merchants/service.ts';
import { OrderService } from '../../src/orders/service.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, PAYER, PAYER_2, setupMerchant } from '../helpers/orders.ts';
import { buildConfig, fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';

/**
 * Group commit of order creation (orders/create-batch.ts) and of nonces (merchants/credentials.ts):
 * concurrent requests share statements, yet each gets exactly the answer it would get alone, the
 * fee ledger balances, and every authenticated request uses up its nonce.
 */
for (const backend of backends()) {
  describe(`order creation in batches (${backend})`, () => {
    let s: TestServer;
    let run = 0;
    const count = async (sql: string, params: unknown[] = []) => Number((await s.db.query<{ n: number }>(sql, params)).rows[0]!.n);
    /** A signed createOrder whose exact bytes and headers can be sent again (a replay). */
    const signedCreate = (m: Creds, body: Record<string, unknown>) => {
      const headers = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body, now: () => s.clock.now() });
      const send = () => s.request('POST', '/api/v1/orders', { body, headers });
      return { send };
    };
    const body = (over: Record<string, unknown> = {}) => buildOrderBody({ dapp_order_id: `b-${++run}`, amount_wei: String(1_000_000 + run), ...over });

    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()] });
    });
    after(() => s.close());

    it('a burst of 40 concurrent creates: 40 orders, 40 reserves, 40 audit rows, the ledger balances', async () => {
      const m = await setupMerchant(s, { topUp: '10.00' });
      const rs = await Promise.all(Array.from({ length: 40 }, () => s.signed(m, 'POST', '/api/v1/orders', { body: body() })));
      assert.deepEqual(
        rs.map((r) => r.status),
        Array(40).fill(402),
        rs.find((r) => r.status !== 402)?.text,
      );
      const ids = new Set(rs.map((r) => r.body.order_id));
      assert.equal(ids.size, 40);
      assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [m.merchantId]), 40);
      assert.equal(await count(`SELECT count(*)::int AS n FROM fee_ledger WHERE merchant_id = $1 AND kind = 'reserve'`, [m.merchantId]), 40);
      assert.equal(await count(`SELECT count(*)::int AS n FROM order_transitions t JOIN orders o ON o.id = t.order_id WHERE o.merchant_id = $1 AND t.trigger = 'create'`, [m.merchantId]), 40);
      assert.equal(await count('SELECT count(*)::int AS n FROM request_nonces WHERE api_key = $1', [m.apiKey]), 40);
      const bal = (await getFeeBalance(s.db, m.merchantId))!;
      assert.equal(bal.reserved, 40n * 10_000n);
      assert.equal(bal.available, 10_000_000n - 40n * 10_000n);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
      // The terms of each response are its own order's.
      for (const r of rs) {
        const st = await s.signed(m, 'GET', `/api/v1/orders/${r.body.order_id}`);
        assert.equal(st.body.amount_wei, r.body.accepts[0].amount);
      }
    });

    it('/metrics counts batches and the items they carried: a burst shares statements', async () => {
      /** The value of one sample line of the Prometheus text, e.g. `tollgate_db_batches_total{batcher="orders"}`. */
      const sample = async (name: string, batcher: string) => {
        const text = (await s.request('GET', '/metrics')).text;
        const line = text.split('\n').find((l) => l.startsWith(`${name}{batcher="${batcher}"} `));
        assert.ok(line, `${name}{batcher="${batcher}"} is exported`);
        return Number(line.split(' ')[1]);
      };
      const m = await setupMerchant(s, { topUp: '10.00' });
      const before = { batches: await sample('tollgate_db_batches_total', 'orders'), items: await sample('tollgate_db_batch_items_total', 'orders') };
      const rs = await Promise.all(Array.from({ length: 30 }, () => s.signed(m, 'POST', '/api/v1/orders', { body: body() })));
      assert.deepEqual(
        rs.map((r) => r.status),
        Array(30).fill(402),
      );
      const batches = (await sample('tollgate_db_batches_total', 'orders')) - before.batches;
      const items = (await sample('tollgate_db_batch_items_total', 'orders')) - before.items;
      assert.equal(items, 30, 'every create went through exactly one batch');
      assert.ok(batches >= 1 && batches < 30, `30 concurrent creates shared statements (${batches} batches)`);
      assert.equal(await sample('tollgate_db_batch_queued', 'orders'), 0, 'nothing left waiting');
      // Signed GETs consume their nonces through the nonce batcher, except getOrderStatus, whose
      // nonce goes with its order read (orders/status-batch.ts).
      const nonceItems = await sample('tollgate_db_batch_items_total', 'nonces');
      const statusItems = await sample('tollgate_db_batch_items_total', 'order_status');
      assert.equal((await s.signed(m, 'GET', '/api/v1/merchant')).status, 200);
      assert.equal(await sample('tollgate_db_batch_items_total', 'nonces'), nonceItems + 1);
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${rs[0]!.body.order_id}`)).status, 200);
      assert.equal(await sample('tollgate_db_batch_items_total', 'order_status'), statusItems + 1);
      assert.equal(await sample('tollgate_db_batch_items_total', 'nonces'), nonceItems + 1);
    });

    it('duplicates inside one burst: one order each; the other is 409 with the right code', async () => {
      const m = await setupMerchant(s);
      const dupId = body();
      const sameTerms = body();
      const rs = await Promise.all([
        s.signed(m, 'POST', '/api/v1/orders', { body: dupId }),
        s.signed(m, 'POST', '/api/v1/orders', { body: { ...dupId, amount_wei: '777' } }),
        s.signed(m, 'POST', '/api/v1/orders', { body: sameTerms }),
        s.signed(m, 'POST', '/api/v1/orders', { body: { ...sameTerms, dapp_order_id: `${sameTerms.dapp_order_id}-twin` } }),
        ...Array.from({ length: 6 }, () => s.signed(m, 'POST', '/api/v1/orders', { body: body() })),
      ]);
      const codes = rs.map((r) => (r.status === 402 ? 402 : `${r.status} ${r.body.code}`));
      assert.deepEqual([...codes.slice(0, 2)].sort(), [402, '409 order_already_exists'].sort());
      assert.deepEqual([...codes.slice(2, 4)].sort(), [402, '409 order_conflict'].sort());
      assert.deepEqual(codes.slice(4), Array(6).fill(402));
      assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [m.merchantId]), 8);
      assert.equal((await getFeeBalance(s.db, m.merchantId))!.reserved, 8n * 10_000n);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('a balance for 5 fees and 8 concurrent creates: exactly 5 orders, 3 refusals, nothing overdrawn', async () => {
      const m = await setupMerchant(s, { topUp: '0.05' });
      const reqs = Array.from({ length: 8 }, () => signedCreate(m, body()));
      const rs = await Promise.all(reqs.map((r) => r.send()));
      const created = rs.filter((r) => r.status === 402);
      const refused = rs.filter((r) => r.status !== 402);
      assert.equal(created.length, 5);
      assert.deepEqual(
        refused.map((r) => `${r.status} ${r.body.code}`),
        Array(3).fill('400 insufficient_fee_balance'),
      );
      const bal = (await getFeeBalance(s.db, m.merchantId))!;
      assert.deepEqual([bal.available, bal.reserved], [0n, 50_000n]);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
      // A refused request still used up its nonce: sent again it is a replay, not a second try.
      const again = await reqs[rs.indexOf(refused[0]!)]!.send();
      assert.equal(again.status, 401);
      assert.equal(again.body.code, 'replay_detected');
    });

    it('the same signed request twice at once: one order, one 401 replay_detected', async () => {
      const m = await setupMerchant(s);
      const req = signedCreate(m, body());
      const rs = await Promise.all([req.send(), req.send(), req.send()]);
      assert.deepEqual(rs.map((r) => r.status).sort(), [401, 401, 402]);
      for (const r of rs.filter((x) => x.status === 401)) assert.equal(r.body.code, 'replay_detected');
      assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [m.merchantId]), 1);
    });

    it('a refused create uses up its nonce: schema error and service refusals replay as 401', async () => {
      const m = await setupMerchant(s);
      const cases = [
        { body: { ...body(), colour: 'blue' }, code: 'invalid_request' },
        { body: body({ chain_id: 1 }), code: 'chain_not_supported' },
        { body: body({ from_address: '0x1234' }), code: 'invalid_request' },
      ];
      for (const c of cases) {
        const req = signedCreate(m, c.body);
        const first = await req.send();
        assert.equal(first.status, 400, first.text);
        assert.equal(first.body.code, c.code);
        const replay = await req.send();
        assert.equal(replay.status, 401, `replay of a ${c.code} refusal`);
        assert.equal(replay.body.code, 'replay_detected');
      }
      assert.equal(await count('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [m.merchantId]), 0);
    });

    it('one bad order does not fail its batch: no wallet for USDT, the USDC orders are created', async () => {
      const m = await s.createMerchant({ topUp: '1.00' });
      const w = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: MERCHANT_WALLET });
      assert.equal(w.status, 201);
      const rs = await Promise.all([s.signed(m, 'POST', '/api/v1/orders', { body: body({ token_symbol: 'USDT' }) }), ...Array.from({ length: 4 }, () => s.signed(m, 'POST', '/api/v1/orders', { body: body() }))]);
      assert.equal(rs[0]!.status, 400);
      assert.equal(rs[0]!.body.code, 'wallet_not_found');
      assert.deepEqual(
        rs.slice(1).map((r) => r.status),
        [402, 402, 402, 402],
      );
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('a key revoked through another process is refused at once, though its secret is cached here', async () => {
      const m = await setupMerchant(s);
      const other = await startTollgate(s.tg.deps.config, { db: s.db, clock: s.clock, role: 'api', http: { logger: false } });
      try {
        const viaOther = (method: string, path: string, b?: Record<string, unknown>) =>
          fetch(other.url! + path, { method, headers: { 'content-type': 'application/json', ...signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body: b, now: () => s.clock.now() }) }, ...(b ? { body: JSON.stringify(b) } : {}) });
        // Both processes have looked the key up (and cached its decrypted secret).
        const created = await s.signed(m, 'POST', '/api/v1/orders', { body: body() });
        assert.equal(created.status, 402);
        assert.equal((await viaOther('GET', `/api/v1/orders/${created.body.order_id}`)).status, 200);
        const revoke = await s.admin('DELETE', `/admin/v1/merchants/${m.merchantId}/api-keys/${m.apiKey}`);
        assert.equal(revoke.status, 200, revoke.text);
        for (const [method, path, b] of [
          ['GET', `/api/v1/orders/${created.body.order_id}`, undefined],
          ['POST', '/api/v1/orders', body()],
        ] as const) {
          const r = await viaOther(method, path, b);
          assert.equal(r.status, 401, `${method} ${path}`);
          assert.equal(((await r.json()) as { code: string }).code, 'api_key_revoked');
          const here = await s.signed(m, method, path, b ? { body: b } : {});
          assert.equal(here.body.code, 'api_key_revoked');
        }
      } finally {
        await other.close();
      }
    });

    /** An OrderService of its own (its own batcher) on the test database, counting creating statements. */
    const directOrders = () => {
      const counter = { statements: 0 };
      const counting = (q: Queryable): Queryable => ({
        query: (sql, params, opts) => {
          if (sql.includes('INSERT INTO orders')) counter.statements++;
          return q.query(sql, params, opts);
        },
        exec: (sql) => q.exec(sql),
      });
      const db: Database = { ...s.db, ...counting(s.db), kind: s.db.kind, transaction: (fn) => s.db.transaction((tx) => fn(counting(tx))), close: async () => {} };
      const config = buildConfig({ chains: [fakeChain()] });
      return { orders: new OrderService(db, config, new MerchantService(db, config), s.clock, undefined, chainOrderPorts(config, { evm: evmPaymentPlanner(undefined), solana: solanaPaymentPlanner(config) })), counter };
    };
    /** Order k of a test: amounts unique per `run` (merchants share MERCHANT_WALLET, so equal terms would clash). */
    const directInput = (m: Creds, k: number, tag: string) => ({
      merchantId: m.merchantId,
      receiveType: 'DIRECT' as const,
      dappOrderId: `${tag}-${k}`,
      chainId: 31337,
      tokenSymbol: 'USDC',
      fromAddress: k % 2 ? PAYER : PAYER_2,
      amountWei: String(50_000_000 + run * 1000 + k),
    });

    it('one batch of several merchants: a short merchant gets exactly what its balance covers, in order; the others all', async () => {
      const rich = await setupMerchant(s, { topUp: '1.00' });
      const poor = await setupMerchant(s, { topUp: '0.02' });
      const { orders, counter } = directOrders();
      const tag = `mix-${++run}`;
      const inputs = Array.from({ length: 10 }, (_, k) => directInput(k % 2 ? poor : rich, k, tag));
      const out = await Promise.all(inputs.map((i) => orders.createOrder(i)));
      const kinds = out.map((o) => (o.kind === 'created' ? 'created' : o.code));
      // rich: 0, 2, 4, 6, 8 all created; poor: 1 and 3 (the first two it can pay for), then refused.
      assert.deepEqual(kinds, ['created', 'created', 'created', 'created', 'created', 'insufficient_fee_balance', 'created', 'insufficient_fee_balance', 'created', 'insufficient_fee_balance']);
      assert.ok(counter.statements <= 1 + 5, `${counter.statements} statements`);
      const b = (await getFeeBalance(s.db, poor.merchantId))!;
      assert.deepEqual([b.available, b.reserved], [0n, 20_000n]);
      assert.equal((await getFeeBalance(s.db, rich.merchantId))!.reserved, 50_000n);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('two gateways creating for the same merchants at once: every order exactly once, balances exact', async () => {
      const ms = await Promise.all([0, 1, 2, 3].map(() => setupMerchant(s, { topUp: '5.00' })));
      const a = directOrders();
      const b = directOrders();
      const tag = `two-${++run}`;
      // Opposite merchant orders in the two processes' batches: fee rows must still lock without deadlock.
      const jobs = Array.from({ length: 120 }, (_, k) => {
        const m = ms[k % 4]!;
        const via = k % 2 ? a.orders : b.orders;
        return via.createOrder(directInput(k % 2 ? m : ms[3 - (k % 4)]!, k, tag));
      });
      const out = await Promise.all(jobs);
      assert.ok(
        out.every((o) => o.kind === 'created'),
        JSON.stringify(out.find((o) => o.kind !== 'created')),
      );
      for (const m of ms) {
        const n = await count('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [m.merchantId]);
        assert.equal((await getFeeBalance(s.db, m.merchantId))!.reserved, BigInt(n) * 10_000n);
      }
      assert.equal(await count(`SELECT count(*)::int AS n FROM orders WHERE dapp_order_id LIKE $1`, [`${tag}-%`]), 120);
      // One statement per gateway: no statement failed (a deadlock would have been retried per merchant).
      assert.deepEqual([a.counter.statements, b.counter.statements], [1, 1]);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('two gateways racing for the last of a balance: exactly what it covers is created; every request used its nonce', async () => {
      const m = await setupMerchant(s, { topUp: '0.10' });
      const other = await startTollgate(s.tg.deps.config, { db: s.db, clock: s.clock, role: 'api', http: { logger: false } });
      try {
        // Both gateways read the balance before either commits, so the second to lock it can find it
        // spent (a check violation that is retried order by order, with the nonce still unused).
        const reqs = Array.from({ length: 16 }, (_, k) => {
          const b = body();
          const headers = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body: b, now: () => s.clock.now() });
          const base = k % 2 ? other.url! : s.url;
          return () => fetch(base + '/api/v1/orders', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(b) });
        });
        const rs = await Promise.all(reqs.map((send) => send()));
        const statuses = rs.map((r) => r.status);
        assert.equal(statuses.filter((x) => x === 402).length, 10, JSON.stringify(statuses));
        assert.equal(statuses.filter((x) => x === 400).length, 6);
        const b = (await getFeeBalance(s.db, m.merchantId))!;
        assert.deepEqual([b.available, b.reserved], [0n, 100_000n]);
        assert.deepEqual(await findLedgerImbalances(s.db), []);
        const replays = await Promise.all(reqs.map((send) => send()));
        assert.deepEqual(
          replays.map((r) => r.status),
          Array(16).fill(401),
          'every request, created or refused, used up its nonce',
        );
      } finally {
        await other.close();
      }
    });

    it('groups concurrent creates into few statements, each order answered with its own row', async () => {
      const m = await setupMerchant(s);
      const { orders, counter } = directOrders();
      run++;
      const input = (k: number) => directInput(m, k, `direct-${run}`);
      const out = await Promise.all(Array.from({ length: 30 }, (_, k) => orders.createOrder(input(k))));
      assert.ok(out.every((o) => o.kind === 'created'));
      assert.deepEqual(
        out.map((o) => o.kind === 'created' && o.order.amount_wei),
        Array.from({ length: 30 }, (_, k) => String(50_000_000 + run * 1000 + k)),
      );
      assert.ok(counter.statements <= 3, `30 concurrent creates took ${counter.statements} statements`);
      // What creation answers (built from the input and the statement's pay-to address) is the stored row.
      for (const o of out) {
        assert.ok(o.kind === 'created');
        const { rows } = await s.db.query<Record<string, unknown>>('SELECT * FROM orders WHERE id = $1', [o.order.id]);
        const stored = Object.fromEntries(Object.keys(o.order).map((k) => [k, rows[0]![k]]));
        assert.deepEqual(o.order, stored);
      }
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });
  });
}
