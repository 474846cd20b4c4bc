import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claimDue, recordResults } from '../../src/webhooks/deliveries-repo.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from '../../src/webhooks/schedule.ts';
import { backends } from '../helpers/db.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { createEndpoint, deliveries, dispatch, Receiver, startApiOnly, trigger } from './webhook-fixtures.ts';

/** Retries on the documented schedule (docs/webhooks.md) (driven by the TestClock), refusals, timeouts, dead, redelivery. */
for (const backend of backends()) {
  describe(`webhook retries (${backend})`, () => {
    let s: TestServer;
    before(async () => {
      s = await startApiOnly(backend);
    });
    after(() => s.close());

    /** Moves the clock to the delivery's next attempt and dispatches. */
    async function dispatchWhenDue(m: Creds) {
      const [d] = await deliveries(s, m);
      s.clock.ms = Date.parse(d.next_attempt_at);
      return dispatch(s);
    }

    it('a receiver that is down gets retries on schedule and the event is delivered later', async () => {
      const down = await Receiver.start();
      const port = down.port;
      await down.close(); // nothing listens on the port now: ECONNREFUSED
      const m = await s.createMerchant();
      await createEndpoint(s, m, `http://127.0.0.1:${port}/webhooks`, ['order.invoiced']);
      const eventId = await trigger(s, m, 'order.invoiced');

      let last = s.clock.now();
      for (let attempt = 1; attempt <= 3; attempt++) {
        const r = attempt === 1 ? await dispatch(s) : await dispatchWhenDue(m);
        assert.equal(r.failed, 1, `attempt ${attempt}`);
        const [d] = await deliveries(s, m);
        assert.equal(d.status, 'failed');
        assert.equal(d.attempt_count, attempt);
        const sentAt = Date.parse(d.attempts.at(-1).attempted_at);
        if (attempt > 1) assert.equal(sentAt - last, RETRY_DELAYS_SECONDS[attempt - 2]! * 1000, 'on schedule (no jitter in tests)');
        last = sentAt;
        assert.match(d.attempts.at(-1).error, /ECONNREFUSED/);
        assert.equal(d.attempts.at(-1).status_code, undefined);
        assert.equal(Date.parse(d.next_attempt_at) - sentAt, RETRY_DELAYS_SECONDS[attempt - 1]! * 1000);
        // not due yet: nothing is sent early
        s.clock.ms = Date.parse(d.next_attempt_at) - 1;
        assert.equal((await dispatch(s)).claimed, 0);
      }

      const up = await Receiver.start(port);
      try {
        const r = await dispatchWhenDue(m);
        assert.equal(r.delivered, 1);
        assert.equal(up.received.length, 1);
        assert.equal(up.envelopes()[0]!.id, eventId, 'the event id is stable across retries');
        assert.equal(up.received[0]!.headers['x-webhook-attempt'], '4');
        const [d] = await deliveries(s, m);
        assert.equal(d.status, 'delivered');
        assert.deepEqual(
          d.attempts.map((a: { status_code?: number }) => a.status_code ?? null),
          [null, null, null, 200],
        );
      } finally {
        await up.close();
      }
    });

    it('a 4xx is recorded as refused and still retried; 5xx, 408 and 429 are not refusals', async () => {
      const rx = await Receiver.start();
      try {
        for (const [status, refused] of [
          [400, true],
          [404, true],
          [500, false],
          [408, false],
          [429, false],
        ] as const) {
          const m = await s.createMerchant();
          await createEndpoint(s, m, rx.url, ['order.cancelled']);
          rx.reply = () => ({ status, body: `nope ${status}` });
          await trigger(s, m, 'order.cancelled');
          assert.equal((await dispatch(s)).failed, 1);
          const [d] = await deliveries(s, m);
          assert.equal(d.status, 'failed', String(status));
          assert.equal(d.last_status_code, status);
          assert.deepEqual([d.attempts[0].status_code, d.attempts[0].refused, d.attempts[0].response_body], [status, refused, `nope ${status}`]);
          assert.ok(d.next_attempt_at, 'retry scheduled');
        }
      } finally {
        await rx.close();
      }
    });

    it('a receiver that does not answer in time is a timed-out attempt', async () => {
      const rx = await Receiver.start();
      try {
        rx.reply = () => 'hang';
        const m = await s.createMerchant();
        await createEndpoint(s, m, rx.url, ['order.expired']);
        await trigger(s, m, 'order.expired');
        const started = Date.now();
        assert.equal((await dispatch(s, { timeoutMs: 300 })).failed, 1);
        assert.ok(Date.now() - started < 2000);
        const [d] = await deliveries(s, m);
        assert.match(d.attempts[0].error, /^timeout: no complete response within 300 ms/);
        assert.equal(d.attempts[0].status_code, undefined);
        assert.ok(d.attempts[0].latency_ms >= 290);
        assert.equal(d.attempts[0].refused, false);

        rx.reply = () => 'destroy';
        await dispatchWhenDue(m);
        const [d2] = await deliveries(s, m);
        assert.match(d2.attempts[1].error, /ECONNRESET|socket hang up|closed/);
      } finally {
        await rx.close();
      }
    });

    it('after the schedule the delivery is dead; redeliver sends it again as a new delivery and keeps the history', async () => {
      const rx = await Receiver.start();
      try {
        rx.reply = () => ({ status: 503 });
        const m = await s.createMerchant();
        await createEndpoint(s, m, rx.url, ['order.invoiced']);
        await trigger(s, m, 'order.invoiced');
        const start = s.clock.now();
        await dispatch(s);
        for (let i = 2; i <= MAX_ATTEMPTS; i++) await dispatchWhenDue(m);
        const [dead] = await deliveries(s, m);
        assert.equal(dead.status, 'dead');
        assert.equal(dead.next_attempt_at, undefined);
        assert.equal(dead.attempts.length, MAX_ATTEMPTS);
        const span = Date.parse(dead.attempts.at(-1).attempted_at) - start;
        assert.ok(span >= 3 * 86_400_000, `retried for ${span / 86_400_000} days`);
        s.clock.advance(10 * 86_400);
        assert.equal((await dispatch(s)).claimed, 0, 'dead is final');
        assert.equal(rx.received.length, MAX_ATTEMPTS);

        rx.reply = () => ({ status: 200 });
        const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhook-deliveries/${dead.delivery_id}/redeliver`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.result, 'redelivered');
        assert.notEqual(r.body.delivery.delivery_id, dead.delivery_id);
        assert.equal(r.body.delivery.redelivery_of, dead.delivery_id);
        assert.equal(r.body.delivery.status, 'pending');
        assert.equal((await dispatch(s)).delivered, 1);
        assert.equal(rx.envelopes().at(-1)!.id, dead.event_id, 'same event id: receivers deduplicate');
        const all = await deliveries(s, m);
        assert.deepEqual(all.map((d) => d.status).sort(), ['dead', 'delivered']);
        assert.equal(all.find((d) => d.status === 'dead').attempts.length, MAX_ATTEMPTS, 'history intact');
        assert.equal((await deliveries(s, m, { status: 'dead' })).length, 1);

        const missing = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhook-deliveries/whd_nope/redeliver`);
        assert.equal(missing.status, 404);
        assert.equal(missing.body.code, 'delivery_not_found');
      } finally {
        await rx.close();
      }
    });

    it('redeliver all failed/dead since a time: failed retry now, dead get new deliveries, twice is a no-op', async () => {
      const rx = await Receiver.start();
      try {
        rx.reply = () => ({ status: 500 });
        const m = await s.createMerchant();
        await createEndpoint(s, m, rx.url, ['order.cancelled', 'order.expired']);
        const since = new Date(s.clock.now()).toISOString();
        await trigger(s, m, 'order.cancelled');
        await dispatch(s);
        for (let i = 2; i <= MAX_ATTEMPTS; i++) await dispatchWhenDue(m); // → dead
        await trigger(s, m, 'order.expired');
        await dispatch(s); // → failed, retry in 10 s
        const before = await deliveries(s, m);
        assert.deepEqual(before.map((d) => d.status).sort(), ['dead', 'failed']);

        rx.reply = () => ({ status: 204 });
        const path = `/admin/v1/merchants/${m.merchantId}/webhook-deliveries/redeliver`;
        const r = await s.admin('POST', path, { since });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, { requeued: 1, redelivered: 1, more: false });
        assert.deepEqual(await dispatch(s), { claimed: 2, delivered: 2, failed: 0, dead: 0 }, 'both due now, without advancing the clock');
        assert.deepEqual((await s.admin('POST', path, { since })).body, { requeued: 0, redelivered: 0, more: false });
        assert.deepEqual((await s.admin('POST', path, { since: new Date(s.clock.now() + 1000).toISOString(), status: 'dead' })).body, { requeued: 0, redelivered: 0, more: false });
        assert.equal((await s.admin('POST', path, { since: 'yesterday' })).body.param, 'since');
      } finally {
        await rx.close();
      }
    });

    it("a crashed dispatcher's claims come back after the lease; its late result cannot overwrite the new attempt", async () => {
      const rx = await Receiver.start();
      try {
        const m = await s.createMerchant();
        await createEndpoint(s, m, rx.url, ['order.failed']);
        await trigger(s, m, 'order.failed');
        const now = s.clock.now();
        const claimed = await claimDue(s.db, { workerId: 'crashed', now: new Date(now), leaseUntil: new Date(now + 30_000), limit: 10 });
        assert.equal(claimed.length, 1);
        assert.equal((await dispatch(s)).claimed, 0, 'leased: nobody else takes it');
        s.clock.advance(31);
        assert.equal((await dispatch(s)).delivered, 1, 'lease lapsed: delivered by another dispatcher');
        assert.equal(rx.received[0]!.headers['x-webhook-attempt'], '2');
        const late = await recordResults(s.db, 'crashed', [
          { deliveryId: claimed[0]!.id, attempt: 1, status: 'failed', attemptedAt: new Date(now), statusCode: 500, latencyMs: 1, error: null, refused: false, responseBody: null, nextAttemptAt: new Date(now + 10_000) },
        ]);
        assert.equal(late, 0);
        const [d] = await deliveries(s, m);
        assert.equal(d.status, 'delivered');
      } finally {
        await rx.close();
      }
    });
  });
}
