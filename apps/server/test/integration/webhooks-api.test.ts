import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WEBHOOK_EVENTS } from '@tollgate/protocol';
import { decryptSecret } from '../../src/merchants/secrets.ts';
import { backends } from '../helpers/db.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { createEndpoint, startApiOnly, trigger } from './webhook-fixtures.ts';

/** The admin API of webhook endpoints, test events and the event feed. */
for (const backend of backends()) {
  describe(`webhooks admin API (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    const base = () => `/admin/v1/merchants/${m.merchantId}`;

    before(async () => {
      s = await startApiOnly(backend);
      m = await s.createMerchant();
    });
    after(() => s.close());

    it('creates an endpoint: 201 with its own whsec_ secret, stored encrypted under the endpoint id', async () => {
      const r = await s.admin('POST', `${base()}/webhooks`, { url: 'http://127.0.0.1:9/hooks', events: ['order.invoiced', 'order.cancelled', 'order.invoiced'] });
      assert.equal(r.status, 201, r.text);
      assert.match(r.body.webhook_id, /^whe_/);
      assert.match(r.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(r.body.events, ['order.invoiced', 'order.cancelled'], 'duplicates dropped, order kept');
      assert.equal(r.body.enabled, true);
      assert.equal(r.body.url, 'http://127.0.0.1:9/hooks');
      const row = (await s.db.query<{ secret_ciphertext: string }>('SELECT secret_ciphertext FROM webhook_endpoints WHERE id = $1', [r.body.webhook_id])).rows[0]!;
      assert.ok(!row.secret_ciphertext.includes(r.body.secret.slice(6)), 'not stored in the clear');
      assert.equal(decryptSecret(s.tg.deps.config.masterKey, row.secret_ciphertext, r.body.webhook_id), r.body.secret);
      assert.throws(() => decryptSecret(s.tg.deps.config.masterKey, row.secret_ciphertext, 'whe_other'), 'bound to its row');
    });

    it('lists endpoints without secrets', async () => {
      const r = await s.admin('GET', `${base()}/webhooks`);
      assert.equal(r.status, 200);
      assert.ok(r.body.webhooks.length >= 1);
      assert.doesNotMatch(r.text, /whsec_|ciphertext/);
    });

    const bad: [string, unknown, number, string, string?][] = [
      ['no events', { url: 'http://127.0.0.1/x', events: [] }, 400, 'invalid_request', 'events'],
      ['unknown event', { url: 'http://127.0.0.1/x', events: ['order.paid'] }, 400, 'invalid_request'],
      ['not a URL', { url: 'nope', events: ['order.invoiced'] }, 400, 'invalid_request', 'url'],
      ['ftp URL', { url: 'ftp://127.0.0.1/x', events: ['order.invoiced'] }, 400, 'invalid_request', 'url'],
      ['credentials in URL', { url: 'http://a:b@127.0.0.1/x', events: ['order.invoiced'] }, 400, 'invalid_request', 'url'],
      ['unknown field', { url: 'http://127.0.0.1/x', events: ['order.invoiced'], secret: 'mine' }, 400, 'invalid_request', 'secret'],
    ];
    for (const [name, body, status, code, param] of bad) {
      it(`refuses ${name}`, async () => {
        const r = await s.admin('POST', `${base()}/webhooks`, body);
        assert.equal(r.status, status, r.text);
        assert.equal(r.body.code, code);
        if (param) assert.equal(r.body.param, param);
      });
    }

    it('404 for an unknown merchant or endpoint; 401 without the admin token', async () => {
      assert.equal((await s.admin('POST', '/admin/v1/merchants/nobody/webhooks', { url: 'http://127.0.0.1/x', events: ['order.invoiced'] })).body.code, 'merchant_not_found');
      assert.equal((await s.admin('GET', '/admin/v1/merchants/nobody/webhooks')).status, 404);
      const r = await s.admin('POST', `${base()}/webhooks/whe_missing/disable`);
      assert.equal(r.status, 404);
      assert.equal(r.body.code, 'webhook_endpoint_not_found');
      assert.equal((await s.request('GET', `${base()}/webhooks`)).status, 401);
    });

    it('at most 5 enabled endpoints; a disabled one frees a slot, enabling it again is checked', async () => {
      const other = await s.createMerchant();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createEndpoint(s, other, `http://127.0.0.1:9/h${i}`, ['order.invoiced'])).id);
      const sixth = await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks`, { url: 'http://127.0.0.1:9/h6', events: ['order.invoiced'] });
      assert.equal(sixth.status, 400);
      assert.equal(sixth.body.code, 'webhook_endpoint_limit');

      const dis = await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks/${ids[0]}/disable`);
      assert.equal(dis.status, 200);
      assert.equal(dis.body.enabled, false);
      assert.equal((await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks/${ids[0]}/disable`)).status, 200, 'idempotent');
      const replacement = await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks`, { url: 'http://127.0.0.1:9/h7', events: ['order.invoiced'] });
      assert.equal(replacement.status, 201);
      const en = await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks/${ids[0]}/enable`);
      assert.equal(en.status, 400);
      assert.equal(en.body.code, 'webhook_endpoint_limit');
    });

    it('concurrent creations cannot exceed the limit', async () => {
      const other = await s.createMerchant();
      const rs = await Promise.all(Array.from({ length: 8 }, (_, i) => s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks`, { url: `http://127.0.0.1:9/c${i}`, events: ['order.expired'] })));
      assert.equal(rs.filter((r) => r.status === 201).length, 5);
      assert.equal(rs.filter((r) => r.body.code === 'webhook_endpoint_limit').length, 3);
    });

    it('rotates the secret: the new one is shown once, the old one kept for the overlap (default 1 day, max 7)', async () => {
      const ep = await createEndpoint(s, m, 'http://127.0.0.1:9/rot', ['order.invoiced']);
      const r = await s.admin('POST', `${base()}/webhooks/${ep.id}/rotate-secret`, {});
      assert.equal(r.status, 200, r.text);
      assert.match(r.body.secret, /^whsec_/);
      assert.notEqual(r.body.secret, ep.secret);
      assert.equal(Date.parse(r.body.previous_secret_expires_at), s.clock.now() + 86_400_000);
      const tooLong = await s.admin('POST', `${base()}/webhooks/${ep.id}/rotate-secret`, { overlap_seconds: 7 * 86_400 + 1 });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.param, 'overlap_seconds');
      const now = await s.admin('POST', `${base()}/webhooks/${ep.id}/rotate-secret`, { overlap_seconds: 0 });
      assert.equal(now.status, 200);
      assert.equal(now.body.previous_secret_expires_at, undefined, 'overlap 0 switches at once');
      const list = await s.admin('GET', `${base()}/webhooks`);
      assert.doesNotMatch(list.text, new RegExp(now.body.secret.slice(6, 20).replace(/[+/]/g, '.')));
    });

    it('trigger emits a test event through the outbox to subscribed endpoints only', async () => {
      const other = await s.createMerchant();
      await createEndpoint(s, other, 'http://127.0.0.1:9/a', ['order.invoiced']);
      await createEndpoint(s, other, 'http://127.0.0.1:9/b', ['order.cancelled']);
      const r = await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks/trigger`, { event: 'order.invoiced' });
      assert.equal(r.status, 201, r.text);
      assert.match(r.body.event_id, /^evt_/);
      assert.equal(r.body.deliveries, 1);
      const ev = (await s.db.query<{ payload: Record<string, unknown>; test: boolean }>('SELECT payload, test FROM webhook_events WHERE id = $1', [r.body.event_id])).rows[0]!;
      assert.equal(ev.test, true);
      assert.equal(ev.payload.livemode, false);
      assert.equal(ev.payload.test, true);
      assert.equal(ev.payload.status, 'INVOICED');
      assert.match(String(ev.payload.order_id), /^ord_/);
      for (const event of WEBHOOK_EVENTS) assert.equal((await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks/trigger`, { event })).status, 201, event);
      assert.equal((await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/webhooks/trigger`, { event: 'nope' })).status, 400);
    });

    it('the event feed returns events in creation order after a cursor and long-polls for new ones', async () => {
      const other = await s.createMerchant();
      const feed = (q: string) => s.admin('GET', `/admin/v1/merchants/${other.merchantId}/events${q}`);
      const empty = await feed('');
      assert.deepEqual(empty.body, { events: [], next_after: null });
      const e1 = await trigger(s, other, 'order.invoiced');
      const e2 = await trigger(s, other, 'order.cancelled');
      // The feed serves an event once its transaction is older than every running one (repo.ts
      // SETTLED): on a Postgres server shared with other busy databases (CI runs test files side by
      // side) that can take a moment after the commit, so read until both are served.
      let all = await feed('');
      for (const until = Date.now() + 10_000; all.body.events.length < 2 && Date.now() < until; all = await feed('')) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(
        all.body.events.map((e: { id: string }) => e.id),
        [e1, e2],
      );
      assert.equal(all.body.next_after, e2);
      assert.equal(all.body.events[0].test, true);
      const fromNow = await feed('?after=now');
      assert.deepEqual([fromNow.body.events, fromNow.body.next_after], [[], e2]);

      const started = Date.now();
      const waiting = feed(`?after=${e2}&wait=5`);
      await new Promise((r) => setTimeout(r, 300));
      const e3 = await trigger(s, other, 'order.expired');
      const got = await waiting;
      assert.deepEqual(
        got.body.events.map((e: { id: string }) => e.id),
        [e3],
      );
      assert.ok(Date.now() - started < 4000, 'answered as soon as the event committed');

      const quiet = Date.now();
      const none = await feed(`?after=${e3}&wait=1`);
      assert.deepEqual(none.body, { events: [], next_after: e3 });
      assert.ok(Date.now() - quiet >= 900, 'waited');
      assert.equal((await feed('?after=evt_unknown')).body.param, 'after');
      assert.equal((await feed('?wait=abc')).status, 400);
    });
  });

  describe(`webhook URLs in production (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    before(async () => {
      s = await startApiOnly(backend, { environment: 'production' });
      m = await s.createMerchant();
    });
    after(() => s.close());

    for (const url of [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://localhost./x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://10.1.2.3/x',
      'https://172.20.0.1/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/x',
      'https://100.64.1.1/x',
      'https://[fd00::1]/x',
      'https://[fe80::1]/x',
      'https://0.0.0.0/x',
    ]) {
      it(`refuses ${url}`, async () => {
        const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks`, { url, events: ['order.invoiced'] });
        assert.equal(r.status, 400, r.text);
        assert.equal(r.body.code, 'webhook_url_not_allowed');
        assert.equal(r.body.param, 'url');
      });
    }

    it('accepts https to a public IP', async () => {
      const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks`, { url: 'https://93.184.216.34/hooks', events: ['order.invoiced'] });
      assert.equal(r.status, 201, r.text);
    });
  });
}
