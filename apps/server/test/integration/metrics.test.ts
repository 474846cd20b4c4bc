import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, rpcRequest, type DevChain } from '@tollgate/devchain';
import pg from 'pg';
import { Registry } from 'prom-client';
import { OpsMetrics } from '../../src/metrics/ops.ts';
import { backends } from '../helpers/db.ts';
import { sample } from '../helpers/metrics.ts';
import { buildOrderBody, MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, headNumber, pay, payerAddress, startTestChain, watcherFor } from './watcher-fixtures.ts';
import { createEndpoint, dispatch, Receiver, startApiOnly, trigger } from './webhook-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const scrape = async (s: TestServer) => {
  const r = await s.request('GET', '/metrics');
  assert.equal(r.status, 200);
  return r.text;
};

const FLOW = { flow: 'ERC20_DIRECT' };

/** Operator metrics (docs/operations.md) move with real orders, real chain ticks and real deliveries. */
for (const backend of backends()) {
  describe(`operator metrics: orders and the chain (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    before(async () => {
      dev = await startTestChain();
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 2 })] });
      m = await setupMerchant(s);
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    it('orders by status and flow, refusals by code, transitions, and the watcher head lag', async () => {
      const t0 = await scrape(s);
      assert.equal(sample(t0, 'tollgate_orders', { status: 'CHECKOUT_VERIFIED', ...FLOW }), undefined, 'no order, no flow series yet');

      const payer = payerAddress(dev, 0);
      const liveBody = buildOrderBody({ chain_id: dev.chainId, from_address: payer, amount_wei: '4200000' });
      const live = await s.signed(m, 'POST', '/api/v1/orders', { body: liveBody });
      assert.equal(live.status, 402, live.text);
      const doomed = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, amount_wei: '1000' }) });
      assert.equal(doomed.status, 402, doomed.text);
      const dup = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, dapp_order_id: liveBody.dapp_order_id }) });
      assert.equal(dup.body.code, 'order_already_exists');
      for (const token_symbol of ['DAI', 'EURC']) {
        const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, token_symbol }) });
        assert.equal(r.body.code, 'token_not_supported');
      }

      const t1 = await scrape(s);
      assert.equal(sample(t1, 'tollgate_orders', { status: 'CHECKOUT_VERIFIED', ...FLOW }), 2);
      assert.equal(sample(t1, 'tollgate_orders', { status: 'INVOICED', ...FLOW }), 0, 'every status has a series once the flow exists');
      assert.equal(sample(t1, 'tollgate_order_create_refusals_total', { code: 'order_already_exists' }), 1);
      assert.equal(sample(t1, 'tollgate_order_create_refusals_total', { code: 'token_not_supported' }), 2);
      assert.equal(sample(t1, 'tollgate_order_transitions_total', { from: 'none', to: 'CHECKOUT_VERIFIED', trigger: 'create' }), 2);

      assert.equal((await s.signed(m, 'POST', `/api/v1/orders/${doomed.body.order_id}/cancel`, { body: {} })).status, 200);
      const tc = await scrape(s);
      assert.equal(sample(tc, 'tollgate_orders', { status: 'CHECKOUT_VERIFIED', ...FLOW }), 1, 'live statuses are counted at every scrape');
      assert.equal(sample(tc, 'tollgate_orders', { status: 'CANCELLED', ...FLOW }), 0, 'terminal ones at most once a minute');
      await pay(dev, 0, MERCHANT_WALLET as `0x${string}`, 4_200_000n);
      await mine(dev.rpcUrl, 2);
      await waitFor('the paid order to be INVOICED', async () => (await s.signed(m, 'GET', `/api/v1/orders/${live.body.order_id}`)).body.status === 'INVOICED');
      s.clock.advance(61); // past TERMINAL_COUNT_MAX_AGE_MS
      const t2 = await scrape(s);
      assert.equal(sample(t2, 'tollgate_orders', { status: 'INVOICED', ...FLOW }), 1);
      assert.equal(sample(t2, 'tollgate_orders', { status: 'CHECKOUT_VERIFIED', ...FLOW }), 0);
      assert.equal(sample(t2, 'tollgate_orders', { status: 'CANCELLED', ...FLOW }), 1);
      assert.equal(sample(t2, 'tollgate_order_transitions_total', { from: 'CHECKOUT_VERIFIED', to: 'CANCELLED', trigger: 'cancel' }), 1);
      // Confirmation and finality may land in one pass (CHECKOUT_VERIFIED → INVOICED) or two.
      const direct = sample(t2, 'tollgate_order_transitions_total', { from: 'CHECKOUT_VERIFIED', to: 'INVOICED', trigger: 'invoice' }) ?? 0;
      const viaConfirmed = sample(t2, 'tollgate_order_transitions_total', { from: 'PAYMENT_CONFIRMED', to: 'INVOICED', trigger: 'invoice' }) ?? 0;
      assert.equal(direct + viaConfirmed, 1);

      // The running watcher leads the chain: caught up, its lag is 0 and its last tick is recent.
      const chain_id = String(dev.chainId);
      const t3 = await waitFor('a caught-up lag sample', async () => {
        const t = await scrape(s);
        return sample(t, 'tollgate_chain_head_lag_blocks', { chain_id }) === 0 && t;
      });
      assert.equal(sample(t3, 'tollgate_chain_head_lag_seconds', { chain_id }), 0);
      const last = sample(t3, 'tollgate_chain_watcher_last_tick_timestamp_seconds', { chain_id })!;
      assert.ok(Math.abs(last - s.clock.now() / 1000) < 62, `last tick ${last}`);
    });
  });

  describe(`operator metrics: head lag of a watcher behind the head (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    before(async () => {
      dev = await startTestChain();
      // API only: this test drives its own watcher, one range of 2 blocks per tick.
      s = await startTestServer({ backend, chains: [chainConfigOf(dev)], role: 'api' });
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    it('reports blocks and chain seconds behind, back to 0 once caught up; counts failed ticks', async () => {
      const metrics = new OpsMetrics(new Registry(), { db: s.db, clock: s.clock });
      const chain = chainConfigOf(dev);
      const w = watcherFor(s.db, chain, { rangeSize: 2, maxRangesPerTick: 1, startBlock: await headNumber(dev), onTick: metrics.watcherTicked });
      const tick = async () => {
        const r = await w.tick();
        w.onTick!(chain.chainId, r, w.lastHead); // what the loop (runChainWatcher) does after each tick
        return r;
      };
      await tick();
      // anvil_mine with an interval: 10 blocks, 12 s apart in chain time.
      await rpcRequest(dev.rpcUrl, 'anvil_mine', ['0xa', '0xc']);
      const r = await tick();
      assert.equal(r.kind, 'leader');
      const head = await rpcRequest<{ number: string; timestamp: string }>(dev.rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
      const cursor = await rpcRequest<{ timestamp: string }>(dev.rpcUrl, 'eth_getBlockByNumber', [`0x${(r as { cursor: bigint }).cursor.toString(16)}`, false]);
      const text = await metrics.registry.metrics();
      const chain_id = String(chain.chainId);
      assert.equal(sample(text, 'tollgate_chain_head_lag_blocks', { chain_id }), Number(BigInt(head.number) - (r as { cursor: bigint }).cursor));
      assert.ok(sample(text, 'tollgate_chain_head_lag_blocks', { chain_id })! >= 8);
      assert.equal(sample(text, 'tollgate_chain_head_lag_seconds', { chain_id }), Number(BigInt(head.timestamp) - BigInt(cursor.timestamp)));
      assert.ok(sample(text, 'tollgate_chain_head_lag_seconds', { chain_id })! >= 90);

      for (let i = 0; i < 20; i++) if (((await tick()) as { caughtUp?: boolean }).caughtUp) break;
      const caught = await metrics.registry.metrics();
      assert.equal(sample(caught, 'tollgate_chain_head_lag_blocks', { chain_id }), 0);
      assert.equal(sample(caught, 'tollgate_chain_head_lag_seconds', { chain_id }), 0);
      await w.release();

      // A chain whose RPC is down: the tick fails and is counted; no lag is invented for it.
      const dead = fakeChain(chain.chainId);
      const broken = watcherFor(s.db, dead, { onTick: metrics.watcherTicked, rpcOptions: { retry: { attempts: 1, baseMs: 1, maxMs: 1 }, timeoutMs: 500 } });
      const failed = await broken.tick();
      assert.equal(failed.kind, 'error');
      metrics.watcherTicked(dead.chainId, failed, broken.lastHead);
      const afterFail = await metrics.registry.metrics();
      assert.equal(sample(afterFail, 'tollgate_chain_watcher_tick_failures_total', { chain_id }), 1);
    });
  });

  describe(`operator metrics: webhook backlog and delivery outcomes (${backend})`, () => {
    let rx: Receiver;
    before(async () => {
      rx = await Receiver.start();
    });
    after(() => rx?.close());

    it('backlog, oldest pending age and dispatcher lag follow the queue (no dispatcher running)', async () => {
      const s = await startApiOnly(backend);
      try {
        const m = await setupMerchant(s);
        await createEndpoint(s, m, rx.url, ['order.invoiced']);
        const t0 = await scrape(s);
        assert.equal(sample(t0, 'tollgate_webhook_backlog', { status: 'pending' }), 0);
        assert.equal(sample(t0, 'tollgate_webhook_oldest_pending_age_seconds'), 0);
        await trigger(s, m, 'order.invoiced');
        await trigger(s, m, 'order.invoiced');
        s.clock.advance(45);
        const t1 = await scrape(s);
        assert.equal(sample(t1, 'tollgate_webhook_backlog', { status: 'pending' }), 2);
        assert.equal(sample(t1, 'tollgate_webhook_backlog_due'), 2);
        assert.equal(sample(t1, 'tollgate_webhook_oldest_pending_age_seconds'), 45);
        assert.equal(sample(t1, 'tollgate_webhook_oldest_due_age_seconds'), 45);

        rx.reply = () => ({ status: 503 });
        const outcomes: string[] = [];
        await dispatch(s, { onRecorded: (rs) => outcomes.push(...rs.map((r) => r.status)) });
        assert.deepEqual(outcomes, ['failed', 'failed']);
        const t2 = await scrape(s);
        assert.equal(sample(t2, 'tollgate_webhook_backlog', { status: 'pending' }), 0);
        assert.equal(sample(t2, 'tollgate_webhook_backlog', { status: 'failed' }), 2);
        assert.equal(sample(t2, 'tollgate_webhook_backlog_due'), 0, 'retries are 10 s out');
        assert.equal(sample(t2, 'tollgate_webhook_oldest_due_age_seconds'), 0);
        assert.equal(sample(t2, 'tollgate_webhook_oldest_pending_age_seconds'), 45);

        rx.reply = () => ({ status: 200 });
        s.clock.advance(20);
        await dispatch(s);
        const t3 = await scrape(s);
        assert.equal(sample(t3, 'tollgate_webhook_backlog', { status: 'failed' }), 0);
        assert.equal(sample(t3, 'tollgate_webhook_oldest_pending_age_seconds'), 0);
      } finally {
        await s.close();
      }
    });

    it('the running dispatcher counts delivered, retry, refused and gave_up attempts', async () => {
      const s = await startTestServer({ backend, chains: [fakeChain()] });
      try {
        const m = await setupMerchant(s);
        await createEndpoint(s, m, rx.url, ['order.cancelled']);
        const seen = () => rx.received.length;
        const outcome = async (o: string) => sample(await scrape(s), 'tollgate_webhook_delivery_attempts_total', { outcome: o }) ?? 0;
        const waitOutcome = (o: string, n: number) => waitFor(`${n} ${o} attempt(s)`, async () => (await outcome(o)) === n);

        rx.received.length = 0;
        rx.reply = () => ({ status: 500 });
        await trigger(s, m, 'order.cancelled');
        await waitOutcome('retry', 1);
        rx.reply = () => ({ status: 410 });
        s.clock.advance(15);
        await waitOutcome('refused', 1);
        rx.reply = () => ({ status: 204 });
        s.clock.advance(70);
        await waitOutcome('delivered', 1);
        assert.equal(seen(), 3);

        // Eleven failed attempts in all: the last one gives up (the delivery is dead).
        rx.reply = () => ({ status: 500 });
        await trigger(s, m, 'order.cancelled');
        for (let n = 1; n <= 10; n++) {
          await waitOutcome('retry', 1 + n);
          s.clock.advance(100_000);
        }
        await waitOutcome('gave_up', 1);
        assert.equal(await outcome('retry'), 11);
        assert.equal(await outcome('delivered'), 1);
      } finally {
        await s.close();
      }
    });
  });
}

for (const backend of backends()) {
  describe(`operator metrics: the database's oldest open transaction (${backend})`, () => {
    it('reports how long the oldest open transaction has run: what holds the webhook event feed back', async () => {
      const s = await startApiOnly(backend);
      try {
        if (backend === 'pglite') {
          // One embedded connection: only the scrape's own transaction, which has just begun.
          assert.equal(sample(await scrape(s), 'tollgate_db_oldest_transaction_age_seconds'), 0);
          return;
        }
        // Another session of the same server (a separate connection, as another application's would be).
        const other = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
        await other.connect();
        try {
          await other.query('BEGIN');
          await other.query('SELECT pg_current_xact_id()');
          await new Promise((r) => setTimeout(r, 1_500));
          const held = sample(await scrape(s), 'tollgate_db_oldest_transaction_age_seconds')!;
          assert.ok(held >= 1.4, `an open transaction of 1.5 s is reported (got ${held})`);
          await other.query('COMMIT');
        } finally {
          await other.end();
        }
      } finally {
        await s.close();
      }
    });
  });

  describe(`operator metrics: a scrape while the database is gone (${backend})`, () => {
    it('still answers 200, counts the failure, and reports the database gauges as unknown, never stale or zero', async () => {
      const s = await startApiOnly(backend);
      try {
        const before = await scrape(s);
        assert.equal(sample(before, 'tollgate_webhook_backlog_due'), 0);
        assert.equal(sample(before, 'tollgate_scrape_db_errors_total'), 0);
        await s.db.close();
        const t = await scrape(s);
        assert.equal(sample(t, 'tollgate_scrape_db_errors_total'), 1);
        assert.equal(sample(t, 'tollgate_webhook_backlog', { status: 'pending' }), undefined, 'labelled gauges are absent');
        for (const name of ['tollgate_webhook_backlog_due', 'tollgate_webhook_oldest_pending_age_seconds', 'tollgate_webhook_oldest_due_age_seconds', 'tollgate_db_oldest_transaction_age_seconds']) {
          assert.ok(Number.isNaN(sample(t, name)), `${name} is NaN (unknown), not 0`);
        }
        assert.match(t, /tollgate_http_request_duration_seconds_count/, 'the process metrics are still served');
      } finally {
        await s.tg.close();
        await s.database.drop().catch(() => {});
      }
    });
  });
}
