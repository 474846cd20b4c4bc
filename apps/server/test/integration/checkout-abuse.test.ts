import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_RATE_LIMITS } from '../../src/http/route.ts';
import { startTollgate, type Tollgate } from '../../src/main.ts';
import { backends } from '../helpers/db.ts';
import { PAYER, setupMerchant } from '../helpers/orders.ts';
import { buildConfig, fakeChain, type Creds, type TestResponse, type TestServer } from '../helpers/server.ts';
import { buildSessionBody, countRows, createSession, startCheckoutServer } from './checkout-fixtures.ts';

/** Abuse limits of the public checkout routes (429 + Retry-After) and ids kept out of logs. */
for (const backend of backends()) {
  describe(`checkout rate limits (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let id: string;
    before(async () => {
      s = await startCheckoutServer(backend, {
        http: { rateLimits: { public_read: { max: 5, timeWindowMs: 60_000 }, checkout_bind: { max: 3, timeWindowMs: 60_000 } } },
      });
      m = await setupMerchant(s);
      id = (await createSession(s, m)).checkout_id;
    });
    after(() => s.close());

    const assert429 = (r: TestResponse) => {
      assert.equal(r.status, 429, r.text);
      assert.equal(r.body.code, 'rate_limited');
      assert.equal(typeof r.body.error, 'string');
      assert.match(r.body.request_id, /^req_/);
      const retry = Number(r.headers.get('retry-after'));
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${r.headers.get('retry-after')}`);
    };

    it('public reads: the limit per IP and route, then 429 rate_limited with Retry-After in the error envelope', async () => {
      for (let i = 0; i < 5; i++) {
        const r = await s.request('GET', `/checkout/v1/sessions/${id}`);
        assert.equal(r.status, 200, `read ${i + 1}: ${r.text}`);
        assert.equal(r.headers.get('x-ratelimit-limit'), '5');
      }
      assert429(await s.request('GET', `/checkout/v1/sessions/${id}`));
      // unknown ids count too: guessing ids costs the same budget
      assert429(await s.request('GET', `/checkout/v1/sessions/cs_${'1'.repeat(33)}`));
      for (let i = 0; i < 5; i++) assert.equal((await s.request('GET', `/checkout/v1/sessions/${id}/status`)).status, 200);
      assert429(await s.request('GET', `/checkout/v1/sessions/${id}/status`));
    });

    it('GET /merchants/{id} is limited like the other public reads', async () => {
      for (let i = 0; i < 5; i++) assert.equal((await s.request('GET', `/merchants/${m.merchantId}`)).status, 200);
      assert429(await s.request('GET', `/merchants/${m.merchantId}`));
    });

    it('bind has its own, smaller budget; a refused bind does no database work', async () => {
      const other = (await createSession(s, m, { price: '1.23', line_items_json: undefined })).checkout_id;
      for (let i = 0; i < 3; i++) {
        const r = await s.request('POST', `/checkout/v1/sessions/${other}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER } });
        assert.equal(r.status, 200, r.text);
      }
      const n = await countRows(s, 'orders');
      assert429(await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER } }));
      assert.equal(await countRows(s, 'orders'), n);
    });

    it('merchant (HMAC) and admin routes are not rate-limited here', async () => {
      for (let i = 0; i < 8; i++) {
        assert.equal((await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody() })).status, 200);
        assert.equal((await s.admin('GET', `/admin/v1/merchants/${m.merchantId}`)).status, 200);
      }
    });

    it('defaults: 120 reads and 20 binds per minute per IP', async () => {
      assert.deepEqual(DEFAULT_RATE_LIMITS, { public_read: { max: 120, timeWindowMs: 60_000 }, checkout_bind: { max: 20, timeWindowMs: 60_000 }, machine_payment: { max: 600, timeWindowMs: 60_000 }, machine_payer: { max: 120, timeWindowMs: 60_000 } });
      // A second API process on the same database with the default options.
      const tg = await startTollgate(buildConfig({ chains: [fakeChain()] }), { db: s.db, clock: s.clock, role: 'api', http: { logger: false } });
      try {
        const read = await fetch(`${tg.url}/checkout/v1/sessions/${id}`);
        assert.equal(read.headers.get('x-ratelimit-limit'), '120');
        const bind = await fetch(`${tg.url}/checkout/v1/sessions/${id}/bind`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        assert.equal(bind.headers.get('x-ratelimit-limit'), '20');
        assert.equal((await fetch(`${tg.url}/merchants/${m.merchantId}`)).headers.get('x-ratelimit-limit'), '120');
      } finally {
        await tg.close();
      }
    });
  });

  describe(`checkout ids stay out of the logs (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let tg: Tollgate;
    const lines: string[] = [];
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s);
      const stream = new Writable({
        write(chunk, _enc, cb) {
          for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(l);
          cb();
        },
      });
      tg = await startTollgate(buildConfig({ chains: [fakeChain()], logLevel: 'info' }), {
        db: s.db,
        clock: s.clock,
        role: 'api',
        http: { logger: { level: 'trace', stream }, rateLimits: { public_read: { max: 3, timeWindowMs: 60_000 } } },
      });
    });
    after(async () => {
      await tg?.close();
      await s.close();
    });

    it('create, view, status, bind, errors and 429s log the route with cs_[redacted], never the id', async () => {
      const url = tg.url!;
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push((await createSession(s, m, { price: `2.0${i}`, line_items_json: undefined })).checkout_id);
      const [a, b] = ids as [string, string];
      for (let i = 0; i < 4; i++) await fetch(`${url}/checkout/v1/sessions/${a}`); // the 4th is a 429
      await fetch(`${url}/checkout/v1/sessions/${b}/status`);
      const bound = await fetch(`${url}/checkout/v1/sessions/${b}/bind`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain_id: 31337, token_symbol: 'USDC', from_address: PAYER }) });
      assert.equal(bound.status, 200);
      await fetch(`${url}/checkout/v1/sessions/${b}/bind`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chain_id":' }); // invalid JSON
      await fetch(`${url}/checkout/v1/sessions/${b}/bind`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }); // 415
      await fetch(`${url}/checkout/v1/sessions/${b}?checkout_id=${a}`);
      await new Promise((r) => setTimeout(r, 50));

      assert.ok(lines.length > 10, `expected request logs, got ${lines.length}`);
      const incoming = lines.filter((l) => l.includes('"incoming request"'));
      assert.ok(incoming.some((l) => l.includes('/checkout/v1/sessions/cs_[redacted]/bind')));
      assert.ok(
        lines.some((l) => l.includes('"statusCode":429')),
        'the 429 was logged',
      );
      const text = lines.join('\n');
      for (const id of ids) assert.equal(text.includes(id), false, `a log line contains ${id.slice(0, 8)}…`);
      assert.equal(/cs_(?!\[redacted\])[A-Za-z0-9]/.test(text), false, 'an unredacted cs_ id was logged');
    });
  });
}
