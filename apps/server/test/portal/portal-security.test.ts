// Portal security on a real server and database: cookie flags, session fixation, CSRF on every
// unsafe route, sign-in throttling, the role of every portal route, secrets shown once, one
// merchant never seeing another's data, invitations used once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROUTES } from '../../src/routes.ts';
import { MAX_ACCOUNT_FAILURES } from '../../src/portal/auth.ts';
import { ROLE_RANK } from '../../src/portal/auth.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, setupMerchant } from '../helpers/orders.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type Creds, type TestServer } from '../helpers/server.ts';

const PORTAL_ROUTES = ROUTES.filter((r) => r.auth === 'portal');
const pathOf = (url: string) => url.replace(/:([a-z_]+)/g, 'x');

for (const backend of backends()) {
  describe(`portal security (${backend})`, () => {
    let server: TestServer;
    let a: Creds;
    let b: Creds;
    let ownerPw: string;
    let orderA: string;
    let orderB: string;

    before(async () => {
      server = await startTestServer({ backend, chains: [fakeChain()], role: 'api' });
      a = await setupMerchant(server, { name: 'Shop A' });
      b = await setupMerchant(server, { name: 'Shop B' });
      ownerPw = await addPortalUser(server, a.merchantId, 'Owner@A.example');
      await addPortalUser(server, b.merchantId, 'owner@b.example');
      const oa = await server.signed(a, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      const ob = await server.signed(b, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      assert.equal(oa.status, 402, oa.text);
      orderA = oa.body.order_id ?? oa.body.order?.order_id;
      orderB = ob.body.order_id ?? ob.body.order?.order_id;
      assert.ok(orderA && orderB);
    });
    after(() => server?.close());

    test('sign-in: cookie HttpOnly, SameSite=Strict, Path=/, not Secure over http; a wrong password says nothing more', async () => {
      const p = new PortalClient(server);
      const bad = await p.login('owner@a.example', 'not the password at all');
      assert.equal(bad.status, 401);
      assert.equal(bad.body.code, 'login_failed');
      const unknown = await p.login('nobody@a.example', 'not the password at all');
      assert.equal(unknown.body.code, 'login_failed');
      assert.equal(unknown.body.error, bad.body.error, 'same answer for an unknown email');
      const ok = await p.login('OWNER@a.example', ownerPw);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.role, 'owner');
      assert.equal(ok.body.merchant_id, a.merchantId);
      const cookie = ok.headers.get('set-cookie')!;
      assert.match(cookie, /^tollgate_portal=[A-Za-z0-9_-]{43}; /);
      for (const attr of ['HttpOnly', 'SameSite=Strict', 'Path=/']) assert.ok(cookie.includes(attr), attr);
      assert.ok(!/Secure/.test(cookie));
      assert.equal((await p.call('GET', '/portal/api/session')).status, 200);
      await p.call('POST', '/portal/api/logout');
      assert.equal((await p.call('GET', '/portal/api/session')).status, 401, 'signed out');
    });

    test('session fixation: an id planted before sign-in is replaced and never authenticates', async () => {
      const planted = 'A'.repeat(43);
      const p = new PortalClient(server);
      p.cookie = `tollgate_portal=${planted}`;
      const ok = await p.login('owner@a.example', ownerPw);
      assert.equal(ok.status, 200);
      assert.notEqual(p.cookie, `tollgate_portal=${planted}`);
      const attacker = new PortalClient(server);
      attacker.cookie = `tollgate_portal=${planted}`;
      assert.equal((await attacker.call('GET', '/portal/api/session')).status, 401);
      // a second sign-in in the same browser replaces the first session too
      const before = p.cookie;
      await p.login('owner@a.example', ownerPw);
      const old = new PortalClient(server);
      old.cookie = before;
      assert.equal((await old.call('GET', '/portal/api/session')).status, 401, 'the previous id is dead');
    });

    test('CSRF: every unsafe portal route refuses a missing or wrong X-CSRF-Token before doing anything', async () => {
      const p = new PortalClient(server);
      await p.login('owner@a.example', ownerPw);
      for (const r of PORTAL_ROUTES.filter((x) => x.method !== 'GET')) {
        for (const csrf of [null, 'x'.repeat(43)]) {
          const res = await p.call(r.method, pathOf(r.url), {}, { csrf });
          assert.equal(res.status, 403, `${r.method} ${r.url}: ${res.text}`);
          assert.equal(res.body.code, 'csrf_token_invalid');
        }
      }
      const keys = await server.db.query('SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1', [a.merchantId]);
      assert.equal((keys.rows[0] as { n: number }).n, 1, 'nothing was created');
    });

    test('roles: without a session every portal route is 401; a viewer gets 403 wherever more is needed', async () => {
      const anon = new PortalClient(server);
      for (const r of PORTAL_ROUTES) {
        const res = await anon.call(r.method, pathOf(r.url), r.method === 'GET' ? undefined : {});
        assert.equal(res.status, 401, `${r.method} ${r.url}`);
      }
      const owner = new PortalClient(server);
      await owner.login('owner@a.example', ownerPw);
      const inv = await owner.call('POST', '/portal/api/team/invitations', { email: 'viewer@a.example', role: 'viewer' });
      assert.equal(inv.status, 201, inv.text);
      const viewer = new PortalClient(server);
      const token = new URL(inv.body.invitation_url).hash.split('/').pop()!;
      const acc = await viewer.call('POST', '/portal/api/invitations/accept', { token, password: 'viewer-password-123' });
      assert.equal(acc.status, 200, acc.text);
      assert.equal(acc.body.role, 'viewer');
      let checked = 0;
      // the sign-outs last: each ends the session the loop uses (the viewer signs in again before each)
      const endsSession = (url: string) => /\/logout(\/everywhere)?$/.test(url);
      for (const r of [...PORTAL_ROUTES].sort((x, y) => Number(endsSession(x.url)) - Number(endsSession(y.url)))) {
        const need = r.portalRole ?? 'viewer';
        if (endsSession(r.url)) assert.equal((await viewer.login('viewer@a.example', 'viewer-password-123')).status, 200);
        const res = await viewer.call(r.method, pathOf(r.url), r.method === 'GET' ? undefined : {});
        if (ROLE_RANK[need] > ROLE_RANK.viewer) {
          assert.equal(res.status, 403, `${r.method} ${r.url} needs ${need}: ${res.text}`);
          assert.equal(res.body.code, 'forbidden');
          checked++;
        } else {
          assert.notEqual(res.status, 403, `${r.method} ${r.url} is open to viewers`);
          assert.notEqual(res.status, 401);
        }
      }
      assert.ok(checked >= 10, `${checked} restricted routes`);
      // an owner is refused the operator's routes
      assert.equal((await owner.call('GET', '/portal/api/merchants')).status, 403);
      // disabling a user ends its sessions at once, and it cannot sign in again
      const team = await owner.call('GET', '/portal/api/team');
      const v = team.body.users.find((u: { email: string }) => u.email === 'viewer@a.example');
      assert.equal((await owner.call('POST', `/portal/api/team/${v.user_id}/disable`)).status, 200);
      assert.equal((await viewer.call('GET', '/portal/api/session')).status, 401);
      assert.equal((await new PortalClient(server).login('viewer@a.example', 'viewer-password-123')).status, 401);
    });

    test('invitations are single use', async () => {
      const owner = new PortalClient(server);
      await owner.login('owner@a.example', ownerPw);
      const inv = await owner.call('POST', '/portal/api/team/invitations', { email: 'dev@a.example', role: 'developer' });
      const token = new URL(inv.body.invitation_url).hash.split('/').pop()!;
      const first = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token, password: 'developer-pass-1' });
      assert.equal(first.status, 200);
      assert.equal(first.body.role, 'developer');
      const again = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token, password: 'developer-pass-2' });
      assert.equal(again.status, 410);
      assert.equal(again.body.code, 'invitation_not_usable');
      const team = await owner.call('GET', '/portal/api/team');
      assert.ok(!JSON.stringify(team.body).includes(token), 'the link is never listed');
    });

    test('secrets are shown once: API key and webhook secret in the creating answer only', async () => {
      const p = new PortalClient(server);
      await p.login('owner@a.example', ownerPw);
      const k = await p.call('POST', '/portal/api/api-keys');
      assert.equal(k.status, 201, k.text);
      assert.ok(k.body.api_secret);
      const list = await p.call('GET', '/portal/api/api-keys');
      assert.ok(list.body.api_keys.some((x: { api_key: string }) => x.api_key === k.body.api_key));
      assert.ok(!list.text.includes(k.body.api_secret));
      const rot = await p.call('POST', `/portal/api/api-keys/${k.body.api_key}/rotate`);
      assert.equal(rot.status, 200, rot.text);
      assert.notEqual(rot.body.api_secret, k.body.api_secret);
      const after = await p.call('GET', '/portal/api/api-keys');
      assert.ok(after.body.api_keys.find((x: { api_key: string }) => x.api_key === k.body.api_key).revoked_at);
      assert.ok(!after.text.includes(rot.body.api_secret));
      // the old key is refused, the new one works
      const old = await server.signed({ merchantId: a.merchantId, apiKey: k.body.api_key, apiSecret: k.body.api_secret }, 'GET', '/api/v1/merchant');
      assert.equal(old.status, 401);
      const fresh = await server.signed({ merchantId: a.merchantId, apiKey: rot.body.api_key, apiSecret: rot.body.api_secret }, 'GET', `/api/v1/orders/${orderA}`);
      assert.equal(fresh.status, 200, fresh.text);
      const wh = await p.call('POST', '/portal/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['order.invoiced'] });
      assert.equal(wh.status, 201, wh.text);
      assert.match(wh.body.secret, /^whsec_/);
      const hooks = await p.call('GET', '/portal/api/webhooks');
      assert.ok(!hooks.text.includes(wh.body.secret));
    });

    test("another merchant's order is 404; the operator sees every merchant", async () => {
      const p = new PortalClient(server);
      await p.login('owner@a.example', ownerPw);
      assert.equal((await p.call('GET', `/portal/api/orders/${orderA}`)).status, 200);
      const other = await p.call('GET', `/portal/api/orders/${orderB}`);
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'order_not_found');
      const search = await p.call('GET', '/portal/api/orders', undefined, { query: { q: orderB } });
      assert.deepEqual(search.body.orders, []);
      const op = new PortalClient(server);
      assert.equal((await op.operatorLogin('wrong-token')).status, 401);
      const s = await op.operatorLogin(TEST_ADMIN_TOKEN);
      assert.equal(s.status, 200, s.text);
      assert.equal(s.body.role, 'operator');
      const ms = await op.call('GET', '/portal/api/merchants');
      assert.ok(ms.body.merchants.length >= 2);
      assert.equal((await op.call('GET', '/portal/api/orders')).status, 400, 'pick a merchant first');
      assert.equal((await op.call('POST', '/portal/api/merchants/select', { merchant_id: b.merchantId })).status, 200);
      assert.equal((await op.call('GET', `/portal/api/orders/${orderB}`)).status, 200);
      assert.equal((await op.call('GET', `/portal/api/orders/${orderA}`)).status, 404);
    });

    test('throttling: after the failures allowed per account, even the right password waits (429 + Retry-After)', async () => {
      await addPortalUser(server, a.merchantId, 'throttle@a.example', 'viewer').then(async (pw) => {
        const p = new PortalClient(server);
        for (let i = 0; i < MAX_ACCOUNT_FAILURES; i++) assert.equal((await p.login('throttle@a.example', `wrong-password-${i}`)).status, 401);
        const locked = await p.login('throttle@a.example', pw);
        assert.equal(locked.status, 429);
        assert.equal(locked.body.code, 'rate_limited');
        assert.ok(Number(locked.headers.get('retry-after')) > 0);
        server.clock.advance(16 * 60);
        assert.equal((await p.login('throttle@a.example', pw)).status, 200, 'the window passed');
      });
    });
  });
}

describe('portal cookie over https', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ backend: 'pglite', config: { publicBaseUrl: 'https://pay.example.com' }, role: 'api' });
  });
  after(() => server?.close());
  test('__Host- name and Secure when PUBLIC_BASE_URL is https', async () => {
    const m = await server.createMerchant();
    const pw = await addPortalUser(server, m.merchantId, 'o@https.example');
    const r = await new PortalClient(server).login('o@https.example', pw);
    assert.equal(r.status, 200);
    const c = r.headers.get('set-cookie')!;
    assert.match(c, /^__Host-tollgate_portal=/);
    assert.ok(c.includes('; Secure'));
  });
});
