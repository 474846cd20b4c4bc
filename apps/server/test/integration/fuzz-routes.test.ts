// Hostile input: property-based fuzzing (fast-check) of every route in ROUTES, over headers, query,
// path parameters and body. Merchant routes are fuzzed both unauthenticated/garbled and correctly
// SIGNED (signedHeaders over exactly the body the server will parse), admin routes with and without
// the admin token, public routes plain. Invariants, for every request:
//   1. no 5xx, and the process stays up (/healthz answers after each property);
//   2. every 4xx that is not a success status of the route (createOrder's 402) is the error envelope
//      with a `code` from ERROR_CATALOG whose status is the HTTP status, and a `request_id` (also in
//      X-Request-Id);
//   3. a rejected request writes nothing: row count and newest row version of every table are
//      identical before and after, except request_nonces (a signed request consumes its nonce by design). The server runs
//      with `role: 'api'` (no workers) and rate limits off, so only requests write.
// Runs are seeded and reproducible: fast-check prints the seed and path of a failure; set
// FUZZ_SEED=<seed> to replay it. FUZZ_RUNS sets runs per route (default 100; 1000 with TOLLGATE_LONG=1);
// the wrong-credentials modes run a quarter of that (they stop at authentication).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ERROR_CATALOG, isErrorEnvelope, isId, signRequest, signedHeaders } from '@tollgate/protocol';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import type { RouteDef } from '../../src/http/route.ts';
import { ROUTES } from '../../src/routes.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, setupMerchant } from '../helpers/orders.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type Creds, type TestServer } from '../helpers/server.ts';
import { bodyArb, fcParams, headerValue, installWriteCounter, LONG, pct, queryArb, RUNS, segArb, send, snapshot, TABLES, validBody, writeCount, type Answer, type Raw } from './fuzz-fixtures.ts';

for (const backend of backends()) {
  describe(`hostile input on every route (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let other: Creds;
    let target: Creds;
    let spareKey: string;
    let ids: Record<string, string>;
    let snap: Record<string, string>;
    /** writeCount when `snap` was taken (read before it: a write in between only forces a snapshot). */
    let snapWrites: string;
    const stats = { requests: 0, rejected: 0, accepted: 0 };

    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()], http: { rateLimits: false }, role: 'api' });
      m = await setupMerchant(s, { topUp: '100000.00', name: 'Fuzzed' });
      other = await s.createMerchant({ name: 'Other', topUp: '1.00' });
      target = await setupMerchant(s, { name: 'Admin target' });
      const k = await s.admin('POST', `/admin/v1/merchants/${target.merchantId}/api-keys`);
      spareKey = k.body.api_key;
      const order = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      assert.equal(order.status, 402, order.text);
      const session = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { checkout_type: 'DIRECT', price: '1.00' } });
      assert.equal(session.status, 200, session.text);
      // Quick-pay: a product and an any-amount link of the fuzzed merchant, and one session on it.
      const product = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Fuzz product', price: '3.00' } });
      const link = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '50' } });
      assert.equal(link.status, 200, link.text);
      const qps = await s.request('POST', `/quickpay/v1/links/${link.body.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: buildOrderBody().from_address, amount: '7.77' } });
      assert.equal(qps.status, 200, qps.text);
      const hook = await s.admin('POST', `/admin/v1/merchants/${target.merchantId}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['order.invoiced'] });
      assert.equal(hook.status, 201, hook.text);
      ids = {
        order_id: order.body.order_id,
        checkout_id: session.body.checkout_id,
        merchant_id: target.merchantId,
        webhook_id: hook.body.webhook_id,
        api_key: spareKey,
        delivery_id: 'dlv_doesnotexist',
        product_id: product.body.product_id,
        link_id: link.body.link_id,
        session_id: qps.body.session_id,
      };
      // The write detector can fail: a write moves the write counter and shows in the snapshot, on
      // every table (also one whose statement changed no row); a nonce alone moves neither.
      await installWriteCounter(s);
      for (const t of TABLES) {
        const w0 = await writeCount(s);
        await s.db.query(`DELETE FROM ${t} WHERE false`);
        assert.notEqual(await writeCount(s), w0, `a statement that may write to ${t} moves the write counter`);
      }
      const [w0, s0] = [await writeCount(s), await snapshot(s)];
      await s.db.query('UPDATE merchants SET name = name WHERE id = $1', [m.merchantId]);
      assert.notEqual(await writeCount(s), w0, 'a write moves the write counter');
      assert.notEqual((await snapshot(s)).merchants, s0.merchants, 'a write shows in the snapshot');
      const w1 = await writeCount(s);
      assert.equal((await s.signed(m, 'GET', '/api/v1/merchant')).status, 200);
      assert.equal(await writeCount(s), w1, "a signed read (its nonce stored) moves no counter of the snapshot's tables");
      snapWrites = await writeCount(s);
      snap = await snapshot(s);
    });
    after(async () => {
      console.log(`[fuzz-routes ${backend}] ${stats.requests} requests (${stats.accepted} accepted, ${stats.rejected} rejected), runs per route/mode ${RUNS}`);
      await s?.close();
    });

    /** Sends, then checks the invariants; returns the answer for extra checks. */
    async function check(route: RouteDef<any, any, any> | undefined, r: Raw): Promise<Answer> {
      const a = await send(s.url, r);
      stats.requests++;
      const where = `${r.method} ${r.path.slice(0, 200)} → ${a.status} ${a.text.slice(0, 300)}`;
      assert.ok(a.status >= 200 && a.status < 500, `no 5xx: ${where}`);
      const success = a.status < 400 || (route && a.status in route.response);
      if (!success) {
        stats.rejected++;
        assert.ok(isErrorEnvelope(a.json), `error envelope: ${where}`);
        assert.equal(ERROR_CATALOG[a.json.code as keyof typeof ERROR_CATALOG].status, a.status, `catalog status of ${a.json.code}: ${where}`);
        assert.ok(isId('req', a.json.request_id), where);
        assert.equal(a.headers['x-request-id'], a.json.request_id, where);
        const writes = await writeCount(s);
        if (writes !== snapWrites) {
          const now = await snapshot(s);
          const changed = TABLES.filter((t) => now[t] !== snap[t]);
          assert.deepEqual(changed, [], `a rejected request wrote to ${changed.join(', ')}: ${where}`);
          [snap, snapWrites] = [now, writes];
        }
      } else {
        stats.accepted++;
        snapWrites = await writeCount(s);
        snap = await snapshot(s);
      }
      return a;
    }

    function concretePath(route: RouteDef<any, any, any>, segs: Record<string, string | undefined>): string {
      return route.url.replace(/:([a-z_]+)/g, (_x, name: string) => pct(segs[name] ?? ids[name] ?? 'x'));
    }
    const segsArb = (route: RouteDef<any, any, any>) => {
      const names = [...route.url.matchAll(/:([a-z_]+)/g)].map((x) => x[1]!);
      return fc.record(Object.fromEntries(names.map((n) => [n, fc.option(segArb, { nil: undefined, freq: 2 })]))) as fc.Arbitrary<Record<string, string | undefined>>;
    };
    /** The query the server parses from `qs` (form decoding), or undefined when it cannot be signed (a repeated name). */
    function parsedQuery(qs: string): Record<string, string> | undefined {
      const out: Record<string, string> = Object.create(null);
      for (const [k, v] of new URLSearchParams(qs)) {
        if (k in out) return undefined;
        out[k] = v;
      }
      return out;
    }
    /** admin listEvents long-polls up to 30 s on a valid `wait`: the fuzzer keeps it short. */
    const tame = (route: RouteDef<any, any, any>, qs: string) => (route.url.endsWith('/events') ? qs.replace(/(^|&)wait=\d+/g, '$1wait=0') : qs);

    for (const route of ROUTES) {
      const name = `${route.method} ${route.url}`;
      const valid = () => validBody(route, 31337);

      if (route.auth === 'merchant') {
        it(`${name}: signed requests with arbitrary bodies, query and path`, async () => {
          await fc.assert(
            fc.asyncProperty(segsArb(route), queryArb, bodyArb(valid()), fc.constantFrom('fresh', 'fresh', 'fresh', 'other-secret'), async (segs, qs, b, mode) => {
              const path = concretePath(route, segs);
              let parsedBody: Record<string, unknown> | undefined;
              try {
                const v = b.text === undefined || b.text === '' ? undefined : JSON.parse(b.text);
                if (v && typeof v === 'object' && !Array.isArray(v)) parsedBody = v;
              } catch {
                /* not JSON: signed without a body */
              }
              const query = parsedQuery(qs);
              let headers: Record<string, string>;
              try {
                headers = signedHeaders({ apiKey: m.apiKey, apiSecret: mode === 'other-secret' ? other.apiSecret : m.apiSecret, ...(query ? { query } : {}), ...(parsedBody ? { body: parsedBody } : {}), now: () => s.clock.now() });
              } catch {
                headers = signedHeaders({ apiKey: m.apiKey, apiSecret: mode === 'other-secret' ? other.apiSecret : m.apiSecret, now: () => s.clock.now() });
              }
              const a = await check(route, { method: route.method, path: path + (qs ? `?${qs}` : ''), headers: { ...headers, ...(b.contentType ? { 'content-type': b.contentType } : {}) }, body: b.text });
              if (mode === 'other-secret') assert.ok(a.status === 401 || a.status === 404 || a.status === 405 || a.status === 413 || a.status === 415 || a.status === 400, `signed with another secret: ${a.status} ${a.text}`);
            }),
            fcParams(RUNS),
          );
        });
        it(`${name}: unauthenticated and garbled auth headers`, async () => {
          const authArb = fc.record(
            {
              'x-api-key': fc.oneof(fc.constant(m.apiKey), fc.constant(other.apiKey), headerValue),
              'x-timestamp': fc.oneof(
                fc.constant('now'),
                fc.integer({ min: -1000, max: 1000 }).map((d) => `now${d}`),
                headerValue,
              ),
              'x-nonce': headerValue,
              'x-sign': fc.oneof(headerValue, fc.constant('valid-for-other-body')),
              authorization: headerValue,
            },
            { requiredKeys: [] },
          );
          await fc.assert(
            fc.asyncProperty(segsArb(route), queryArb, bodyArb(valid()), authArb, async (segs, qs, b, auth) => {
              const nowS = Math.floor(s.clock.now() / 1000);
              const headers: Record<string, string> = {};
              for (const [k, v] of Object.entries(auth)) {
                if (v === undefined) continue;
                if (k === 'x-timestamp' && v.startsWith('now')) headers[k] = String(nowS + Number(v.slice(3) || 0));
                else if (k === 'x-sign' && v === 'valid-for-other-body') headers[k] = signRequest(m.apiSecret, { apiKey: m.apiKey, timestamp: String(nowS), nonce: 'nonce-for-nothing', body: { other: 'body' } });
                else headers[k] = v;
              }
              if (b.contentType) headers['content-type'] = b.contentType;
              const a = await check(route, { method: route.method, path: concretePath(route, segs) + (qs ? `?${qs}` : ''), headers, body: b.text });
              assert.ok(a.status >= 400, `garbled auth must be refused: ${a.status} ${a.text}`);
            }),
            fcParams(Math.ceil(RUNS / 4)),
          );
        });
      } else if (route.auth === 'admin') {
        it(`${name}: admin token with arbitrary bodies, query and path`, async () => {
          await fc.assert(
            fc.asyncProperty(segsArb(route), queryArb, bodyArb(valid()), async (segs, qs, b) => {
              const headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(b.contentType ? { 'content-type': b.contentType } : {}) };
              await check(route, { method: route.method, path: concretePath(route, segs) + (qs ? `?${tame(route, qs)}` : ''), headers, body: b.text });
            }),
            fcParams(RUNS),
          );
        });
        it(`${name}: missing or wrong admin token`, async () => {
          const authArb = fc.oneof(
            fc.constant(undefined),
            headerValue,
            headerValue.map((v) => `Bearer ${v}`),
            fc.constantFrom(
              `Bearer ${TEST_ADMIN_TOKEN}x`,
              `Bearer ${TEST_ADMIN_TOKEN.slice(1)}`,
              `Basic ${Buffer.from(`admin:${TEST_ADMIN_TOKEN}`).toString('base64')}`,
              TEST_ADMIN_TOKEN,
              `Bearer  ${TEST_ADMIN_TOKEN}`,
              `Bearer ${TEST_ADMIN_TOKEN.toUpperCase()}`,
            ),
          );
          await fc.assert(
            fc.asyncProperty(segsArb(route), queryArb, bodyArb(valid()), authArb, async (segs, qs, b, auth) => {
              const headers: Record<string, string> = { ...(auth !== undefined ? { authorization: auth } : {}), ...(b.contentType ? { 'content-type': b.contentType } : {}) };
              const a = await check(route, { method: route.method, path: concretePath(route, segs) + (qs ? `?${tame(route, qs)}` : ''), headers, body: b.text });
              assert.ok(a.status >= 400, `wrong admin token must be refused: ${a.status} ${a.text}`);
            }),
            fcParams(Math.ceil(RUNS / 4)),
          );
        });
      } else {
        it(`${name}: arbitrary bodies, query, path and headers`, async () => {
          await fc.assert(
            fc.asyncProperty(segsArb(route), queryArb, bodyArb(valid()), fc.dictionary(fc.constantFrom('x-api-key', 'authorization', 'x-forwarded-for', 'cookie', 'x-sign', 'accept'), headerValue, { maxKeys: 3 }), async (segs, qs, b, extra) => {
              const headers: Record<string, string> = { ...extra, ...(b.contentType ? { 'content-type': b.contentType } : {}) };
              await check(route, { method: route.method, path: concretePath(route, segs) + (qs ? `?${qs}` : ''), headers, body: b.text });
            }),
            fcParams(RUNS),
          );
        });
      }
    }

    it('unknown paths and methods get the envelope too', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), fc.array(segArb, { minLength: 1, maxLength: 4 }), fc.constantFrom('', '/api/v1', '/admin/v1', '/checkout/v1'), async (method, segs, prefix) => {
          const path = prefix + '/' + segs.map(pct).join('/');
          await check(undefined, { method, path, headers: {} });
        }),
        fcParams(Math.ceil(RUNS / 2)),
      );
    });

    describe('authentication attacks on every merchant route', () => {
      const merchantRoutes = ROUTES.filter((r) => r.auth === 'merchant');
      const nowS = () => Math.floor(s.clock.now() / 1000);
      const bodyOf = (route: RouteDef<any, any, any>) => (route.method === 'GET' ? undefined : route.url === '/api/v1/orders' ? buildOrderBody({ amount_wei: String(3_000_000 + Math.floor(Math.random() * 1e9)) }) : validBody(route, 31337));
      /** A signed request with one part chosen by the caller. */
      function attempt(route: RouteDef<any, any, any>, o: { creds?: Creds; secret?: string; timestamp?: string; nonce?: string; sign?: (good: string) => string; body?: Record<string, unknown> | undefined }) {
        const creds = o.creds ?? m;
        const body = 'body' in o ? o.body : bodyOf(route);
        const timestamp = o.timestamp ?? String(nowS());
        const nonce = o.nonce ?? `atk-${Math.random().toString(36).slice(2)}-${Date.now()}`;
        const good = signRequest(o.secret ?? creds.apiSecret, { apiKey: creds.apiKey, timestamp, nonce, ...(body ? { body } : {}) });
        const headers = { 'x-api-key': creds.apiKey, 'x-timestamp': timestamp, 'x-nonce': nonce, 'x-sign': o.sign ? o.sign(good) : good, ...(body ? { 'content-type': 'application/json' } : {}) };
        return check(route, { method: route.method, path: concretePath(route, {}), headers, body: body ? JSON.stringify(body) : undefined });
      }
      const refused = async (p: Promise<Answer>, code: string) => {
        const a = await p;
        assert.equal(a.status, 401, a.text);
        assert.equal(a.json.code, code, a.text);
      };

      it('a replayed request is refused and writes nothing', async () => {
        for (const route of merchantRoutes) {
          const nonce = `replay-${Math.random().toString(36).slice(2)}`;
          const timestamp = String(nowS());
          const body = bodyOf(route);
          const first = await attempt(route, { nonce, timestamp, body });
          assert.notEqual(first.status, 401, first.text);
          await refused(attempt(route, { nonce, timestamp, body }), 'replay_detected');
        }
      });
      it('a timestamp 301 s off either way is refused', async () => {
        for (const route of merchantRoutes) {
          await refused(attempt(route, { timestamp: String(nowS() - 301) }), 'timestamp_out_of_window');
          await refused(attempt(route, { timestamp: String(nowS() + 301) }), 'timestamp_out_of_window');
        }
      });
      it('nonce length bounds: 7 and 129 bytes refused, 8 and 128 accepted', async () => {
        for (const route of merchantRoutes) {
          const r = () => Math.random().toString(36).slice(2, 7);
          await refused(attempt(route, { nonce: 'n'.repeat(7) }), 'nonce_invalid');
          await refused(attempt(route, { nonce: r().padEnd(129, 'n') }), 'nonce_invalid');
          await refused(attempt(route, { nonce: 'é'.repeat(64) + 'x' }), 'nonce_invalid'); // 129 bytes, 65 characters
          for (const len of [8, 128]) {
            const a = await attempt(route, { nonce: r().padEnd(len, 'k') });
            assert.notEqual(a.status, 401, `nonce of ${len} bytes: ${a.text}`);
          }
        }
      });
      it('any single-bit flip of X-Sign is refused', async () => {
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...merchantRoutes), fc.integer({ min: 0, max: 255 }), async (route, bit) => {
            const flip = (good: string) => {
              const b = Buffer.from(good, 'hex');
              b[bit >> 3]! ^= 1 << (bit & 7);
              return b.toString('hex');
            };
            await refused(attempt(route, { sign: flip }), 'invalid_signature');
          }),
          fcParams(LONG ? 1000 : 128),
        );
      });
      it("another merchant's key or secret is refused", async () => {
        for (const route of merchantRoutes) {
          await refused(attempt(route, { secret: other.apiSecret }), 'invalid_signature'); // my key, their secret
          await refused(attempt(route, { creds: other, secret: m.apiSecret }), 'invalid_signature'); // their key, my secret
        }
      });
    });

    // Fixed defects the fuzzer found, pinned so a CI run with few runs still covers them.
    describe('regressions found by the fuzzer', () => {
      it('a path parameter over 100 characters or with a malformed %-escape gets the envelope (was fastify JSON, 414/400)', async () => {
        for (const path of [`/merchants/${'z'.repeat(101)}`, `/api/v1/orders/${'z'.repeat(150)}`, '/merchants/%zz', `/admin/v1/merchants/${'1'.repeat(101)}/api-keys`]) {
          const a = await check(undefined, { method: 'GET', path, headers: {} });
          assert.equal(a.status, 400, `${path}: ${a.text}`);
          assert.equal(a.json.code, 'invalid_request');
        }
      });
      it('U+0000 in a path parameter, query value or body string is a 400, not a 500 (Postgres text cannot hold it)', async () => {
        const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
        for (const r of [
          { method: 'GET', path: '/merchants/%00', headers: {} },
          { method: 'POST', path: '/admin/v1/merchants/a%00b/webhook-deliveries/x/redeliver', headers: admin, body: '{}' },
          { method: 'POST', path: '/admin/v1/merchants', headers: admin, body: JSON.stringify({ name: 'nul\u0000name' }) },
          { method: 'GET', path: `/admin/v1/merchants/${target.merchantId}/webhook-deliveries?order_id=a%00`, headers: admin },
        ]) {
          const a = await check(undefined, r);
          assert.equal(a.status, 400, `${r.path}: ${a.text}`);
          assert.equal(a.json.code, 'invalid_request');
        }
        const body = buildOrderBody({ dapp_order_id: 'nul\u0000id' });
        const h = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body, now: () => s.clock.now() });
        const a = await check(undefined, { method: 'POST', path: '/api/v1/orders', headers: { ...h, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        assert.equal(a.status, 400, a.text);
      });
      it('a signed request whose body holds a number beyond double range (1e99999) is a 400, not a 500', async () => {
        for (const route of ROUTES.filter((r) => r.auth === 'merchant' && r.method === 'POST')) {
          const h = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, now: () => s.clock.now() });
          const a = await check(route, { method: 'POST', path: concretePath(route, {}), headers: { ...h, 'content-type': 'application/json' }, body: '{"amount_wei":1e99999}' });
          assert.equal(a.status, 400, a.text);
          assert.equal(a.json.code, 'invalid_request');
        }
      });
    });

    it('the process is up and the books balance after the fuzzing', async () => {
      const h = await send(s.url, { method: 'GET', path: '/healthz', headers: {} });
      assert.equal(h.status, 200);
      const r = await send(s.url, { method: 'GET', path: '/readyz', headers: {} });
      assert.equal(r.status, 200);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });
  });
}
