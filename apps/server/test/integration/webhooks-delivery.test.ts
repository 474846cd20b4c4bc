import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { generateWebhookSecret, newId, verifyStandardWebhook } from '@tollgate/protocol';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { encryptSecret } from '../../src/merchants/secrets.ts';
import { startWebhookDispatcher } from '../../src/webhooks/dispatcher.ts';
import { emitEvent, emitEvents, type EmittedEvent } from '../../src/webhooks/outbox.ts';
import { waitFor } from '../helpers/wait.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { catchUpClock, createEndpoint, deliveries, dispatch, Receiver, startApiOnly, trigger } from './webhook-fixtures.ts';

/** Independent check of X-Webhook-Signature: node's HMAC over the raw bytes, constant-time compare. */
function xSignatureValid(secret: string, rawBody: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(rawBody, 'utf8')).digest();
  return timingSafeEqual(expected, Buffer.from(header.slice(7), 'hex'));
}

async function createAndCancelOrder(s: TestServer, m: Creds): Promise<string> {
  const created = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
  assert.equal(created.status, 402, created.text);
  const cancelled = await s.signed(m, 'POST', `/api/v1/orders/${created.body.order_id}/cancel`, { body: {} });
  assert.equal(cancelled.status, 200, cancelled.text);
  return created.body.order_id;
}

for (const backend of backends()) {
  describe(`webhook delivery (${backend})`, () => {
    let s: TestServer;
    let rx: Receiver;
    before(async () => {
      s = await startApiOnly(backend);
      rx = await Receiver.start();
    });
    after(async () => {
      await rx.close();
      await s.close();
    });
    beforeEach(() => {
      rx.received.length = 0;
      rx.reply = () => ({ status: 200, body: 'ok' });
    });

    it('an order state change is delivered once, signed over the raw body (both schemes)', async () => {
      const m = await setupMerchant(s);
      const ep = await createEndpoint(s, m, rx.url, ['order.cancelled']);
      const orderId = await createAndCancelOrder(s, m);
      catchUpClock(s);
      const r = await dispatch(s);
      assert.deepEqual(r, { claimed: 1, delivered: 1, failed: 0, dead: 0 });
      assert.equal(rx.received.length, 1);
      const { headers: h, body } = rx.received[0]!;
      assert.equal(h['content-type'], 'application/json');
      assert.equal(h['x-webhook-event'], 'order.cancelled');
      assert.ok(xSignatureValid(ep.secret, body, h['x-webhook-signature']), 'X-Webhook-Signature = HMAC-SHA256(raw body)');
      assert.equal(xSignatureValid(ep.secret, JSON.stringify(JSON.parse(body), null, 1), h['x-webhook-signature']), false, 'a re-serialized body does not verify');
      // The Standard Webhooks trio verifies with the reference `standardwebhooks` package (an
      // independent implementation; it checks the timestamp against the real clock, within 5 min)…
      const verified = new StandardWebhook(ep.secret).verify(body, { 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) });
      assert.equal((verified as { id: string }).id, JSON.parse(body).id);
      // …and with @tollgate/protocol's verifier.
      assert.deepEqual(verifyStandardWebhook({ secret: ep.secret, headers: h, rawBody: body, now: () => s.clock.now() }), {
        ok: true,
        id: h['webhook-id'],
        timestamp: Math.floor(s.clock.now() / 1000),
      });
      const env = JSON.parse(body);
      assert.deepEqual(Object.keys(env), ['id', 'event', 'payload', 'created_at']);
      assert.match(env.id, /^evt_/);
      assert.equal(env.id, h['webhook-id']);
      assert.equal(env.event, 'order.cancelled');
      assert.equal(env.payload.order_id, orderId);
      assert.equal(env.payload.status, 'CANCELLED');
      assert.equal(env.created_at, new Date(s.clock.now()).toISOString());
      assert.match(String(h['x-webhook-delivery']), /^whd_/);
      assert.equal(h['x-webhook-attempt'], '1');

      const [d] = await deliveries(s, m, { order_id: orderId });
      assert.equal(d.status, 'delivered');
      assert.equal(d.event_id, env.id);
      assert.equal(d.attempts.length, 1);
      assert.equal(d.attempts[0].status_code, 200);
      assert.equal(d.attempts[0].response_body, 'ok');
      assert.equal(typeof d.attempts[0].latency_ms, 'number');
      assert.deepEqual(await dispatch(s), { claimed: 0, delivered: 0, failed: 0, dead: 0 }, 'nothing sent twice');
    });

    it("the running dispatcher sends this process's event on its commit, not at its next idle poll", async () => {
      const m = await s.createMerchant();
      await createEndpoint(s, m, rx.url, ['order.failed']);
      // An idle poll of a minute: only the outbox signal can make the delivery arrive in time.
      const worker = startWebhookDispatcher(s.tg.deps, { pollIntervalMs: 60_000, timeoutMs: 2000 });
      try {
        // Its first claim, sent at start, finds nothing (the event below is not committed yet), so
        // it sleeps for the minute. The transaction stays open a moment after the write: the
        // signal comes before the commit, and the dispatcher must still find the row.
        await s.db.transaction(async (tx) => {
          await emitEvent(tx, { merchantId: m.merchantId, event: 'order.failed', payload: { order_id: 'ord_signal' }, clockNow: new Date(s.clock.now()) });
          await new Promise((r) => setTimeout(r, 30));
        });
        const got = await waitFor('the delivery', () => rx.received.find((x) => JSON.parse(x.body).payload.order_id === 'ord_signal'), undefined, { timeoutMs: 5000, everyMs: 10 });
        assert.equal(got.headers['x-webhook-event'], 'order.failed');
        assert.equal(rx.received.length, 1, 'sent once');
      } finally {
        await worker.stop();
      }
    });

    it('events are written in the state change transaction: a rollback leaves no event and no delivery', async () => {
      const m = await s.createMerchant();
      await createEndpoint(s, m, rx.url, ['order.failed']);
      await assert.rejects(
        s.db.transaction(async (tx) => {
          await emitEvent(tx, { merchantId: m.merchantId, event: 'order.failed', payload: { order_id: 'ord_x' }, clockNow: new Date(s.clock.now()) });
          throw new Error('the state change failed');
        }),
      );
      const n = await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events WHERE merchant_id = $1', [m.merchantId]);
      assert.equal(n.rows[0]!.n, 0);
      assert.deepEqual(await deliveries(s, m), []);
    });

    it('emitEvents writes for many events the rows emitEvent writes one by one (events, deliveries per subscribed enabled endpoint); a rollback writes none', async () => {
      const [a, b, c] = [await s.createMerchant(), await s.createMerchant(), await s.createMerchant()];
      const a1 = await createEndpoint(s, a, `${rx.url}?who=a1`, ['order.failed', 'order.cancelled']);
      const a2 = await createEndpoint(s, a, `${rx.url}?who=a2`, ['order.failed']);
      const off = await createEndpoint(s, a, `${rx.url}?who=off`, ['order.failed']);
      await s.admin('POST', `/admin/v1/merchants/${a.merchantId}/webhooks/${off.id}/disable`);
      const eb = await createEndpoint(s, b, `${rx.url}?who=b`, ['order.cancelled']);
      // c has no endpoint: its events are recorded, with no delivery.
      const now = new Date(s.clock.now());
      const batch = (tag: string): EmittedEvent[] => [
        { merchantId: a.merchantId, event: 'order.failed', payload: { order_id: `${tag}1`, amount_wei: '10' }, orderId: `${tag}1`, clockNow: now },
        { merchantId: a.merchantId, event: 'order.cancelled', payload: { order_id: `${tag}2` }, clockNow: now },
        { merchantId: b.merchantId, event: 'order.failed', payload: { order_id: `${tag}3` }, orderId: `${tag}3`, clockNow: now },
        { merchantId: b.merchantId, event: 'order.cancelled', payload: { order_id: `${tag}4` }, orderId: `${tag}4`, clockNow: now, test: true },
        { merchantId: c.merchantId, event: 'order.failed', payload: { order_id: `${tag}5` }, clockNow: now },
      ];
      // The rows an event left, keyed by its payload's order id with the tag removed.
      const rowsOf = async (tag: string) => {
        const ev = await s.db.query<{ k: string; merchant_id: string; event: string; payload: unknown; order_id: string | null; test: boolean; deliveries: string[] }>(
          `SELECT substr(e.payload->>'order_id', length($1) + 1) AS k, e.merchant_id, e.event, e.payload, e.order_id IS NOT NULL AS order_id, e.test,
             coalesce((SELECT array_agg(w.url || ' ' || d.status || ' ' || d.event || ' ' || coalesce(d.order_id IS NOT NULL, false)::text ORDER BY w.url)
               FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.event_id = e.id), '{}') AS deliveries
           FROM webhook_events e WHERE e.payload->>'order_id' LIKE $1 || '%' ORDER BY 1`,
          [tag],
        );
        return ev.rows.map((r) => ({ ...r, payload: JSON.stringify(r.payload).replaceAll(tag, '') }));
      };
      let one = 0;
      for (const e of batch('one_')) one += (await emitEvent(s.db, e)).deliveries;
      const many = await s.db.transaction((tx) => emitEvents(tx, batch('many_')));
      assert.equal(many, one);
      assert.equal(many, 4, 'a: failed → a1 and a2, cancelled → a1; b: cancelled → b; c: none');
      assert.deepEqual(await rowsOf('many_'), await rowsOf('one_'));
      await assert.rejects(
        s.db.transaction(async (tx) => {
          await emitEvents(tx, batch('gone_'));
          throw new Error('the state change failed');
        }),
      );
      assert.deepEqual(await rowsOf('gone_'), []);
      // Nothing of this test goes out in the next tests' dispatches.
      for (const [m, ep] of [
        [a, a1],
        [a, a2],
        [b, eb],
      ] as const)
        await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/${ep.id}/disable`);
    });

    it('only subscribed events reach an endpoint; a disabled endpoint gets nothing until enabled', async () => {
      const m = await setupMerchant(s);
      const wantsInvoiced = await createEndpoint(s, m, `${rx.url}?who=invoiced`, ['order.invoiced']);
      await createEndpoint(s, m, `${rx.url}?who=cancelled`, ['order.cancelled', 'order.expired']);
      const disabled = await createEndpoint(s, m, `${rx.url}?who=disabled`, ['order.cancelled', 'order.invoiced']);
      assert.equal((await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/${disabled.id}/disable`)).status, 200);

      await createAndCancelOrder(s, m);
      await trigger(s, m, 'order.invoiced');
      catchUpClock(s);
      await dispatch(s);
      const got = rx.received.map((r) => `${new URL(r.url, 'http://x').searchParams.get('who')}:${r.headers['x-webhook-event']}`);
      assert.deepEqual(got.sort(), ['cancelled:order.cancelled', 'invoiced:order.invoiced']);
      const byEndpoint = await deliveries(s, m);
      assert.deepEqual(byEndpoint.map((d) => `${new URL(d.url).searchParams.get('who')}:${d.event}`).sort(), ['cancelled:order.cancelled', 'invoiced:order.invoiced']);
      assert.ok(byEndpoint.every((d) => d.webhook_id !== disabled.id));
      assert.ok(byEndpoint.some((d) => d.webhook_id === wantsInvoiced.id));

      // A delivery pending when its endpoint is disabled waits, and goes out once enabled again.
      const enabledAgain = await createEndpoint(s, m, `${rx.url}?who=paused`, ['order.failed']);
      await trigger(s, m, 'order.failed');
      await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/${enabledAgain.id}/disable`);
      rx.received.length = 0;
      assert.equal((await dispatch(s)).claimed, 0);
      await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/${enabledAgain.id}/enable`);
      assert.equal((await dispatch(s)).delivered, 1);
      assert.equal(rx.received[0]!.headers['x-webhook-event'], 'order.failed');
    });

    it('rotation: during the overlap X-Webhook-Signature uses the previous secret and webhook-signature both; then the new one only', async () => {
      const m = await s.createMerchant();
      const ep = await createEndpoint(s, m, rx.url, ['order.invoiced']);
      const rot = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/${ep.id}/rotate-secret`, { overlap_seconds: 3600 });
      const next: string = rot.body.secret;

      await trigger(s, m, 'order.invoiced');
      await dispatch(s);
      const during = rx.received.at(-1)!;
      assert.ok(xSignatureValid(ep.secret, during.body, during.headers['x-webhook-signature']), 'previous secret signs X-Webhook-Signature');
      assert.equal(xSignatureValid(next, during.body, during.headers['x-webhook-signature']), false);
      assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
      const now = () => s.clock.now();
      assert.equal(verifyStandardWebhook({ secret: next, headers: during.headers, rawBody: during.body, now }).ok, true);
      assert.equal(verifyStandardWebhook({ secret: ep.secret, headers: during.headers, rawBody: during.body, now }).ok, true);

      s.clock.advance(3601);
      await trigger(s, m, 'order.invoiced');
      await dispatch(s);
      const afterOverlap = rx.received.at(-1)!;
      assert.ok(xSignatureValid(next, afterOverlap.body, afterOverlap.headers['x-webhook-signature']), 'new secret after the overlap');
      assert.equal(xSignatureValid(ep.secret, afterOverlap.body, afterOverlap.headers['x-webhook-signature']), false);
      assert.equal(String(afterOverlap.headers['webhook-signature']).split(' ').length, 1);
      assert.equal(verifyStandardWebhook({ secret: ep.secret, headers: afterOverlap.headers, rawBody: afterOverlap.body, now }).ok, false);
    });

    it('keeps only the first KiB of a response body', async () => {
      const m = await s.createMerchant();
      await createEndpoint(s, m, rx.url, ['order.expired']);
      rx.reply = () => ({ status: 500, body: 'é'.repeat(3000) });
      await trigger(s, m, 'order.expired');
      await dispatch(s);
      const [d] = await deliveries(s, m);
      assert.ok(Buffer.byteLength(d.attempts[0].response_body) <= 1024 + 3);
      assert.ok(d.attempts[0].response_body.startsWith('éé'));
    });
  });

  describe(`webhook SSRF at connect time (${backend})`, () => {
    let s: TestServer;
    let rx: Receiver;
    before(async () => {
      s = await startApiOnly(backend, { environment: 'production' });
      rx = await Receiver.start();
    });
    after(async () => {
      await rx.close();
      await s.close();
    });

    // Simulates an endpoint whose name resolved to a public address at creation and now points
    // at the loopback receiver (DNS rebinding), and an IP literal that slipped into the table.
    for (const host of ['localhost', '127.0.0.1', '[::ffff:127.0.0.1]']) {
      it(`refuses to connect to ${host} in production`, async () => {
        const m = await s.createMerchant();
        const id = newId('whe');
        await s.db.query(`INSERT INTO webhook_endpoints (id, merchant_id, url, events, secret_ciphertext) VALUES ($1, $2, $3, $4::text[], $5)`, [
          id,
          m.merchantId,
          `https://${host}:${rx.port}/webhooks`,
          ['order.invoiced'],
          encryptSecret(s.tg.deps.config.masterKey, generateWebhookSecret(), id),
        ]);
        await trigger(s, m, 'order.invoiced');
        const r = await dispatch(s);
        assert.equal(r.failed, 1);
        const [d] = await deliveries(s, m);
        assert.match(d.attempts[0].error, /^refused to connect: .*loopback.*not a public address/);
        assert.equal(rx.received.length, 0, 'no byte reached the loopback receiver');
      });
    }
  });
}
