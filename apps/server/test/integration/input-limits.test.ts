// Input the database or the signing code cannot take must be refused with a 400/401 envelope,
// never a 500 or a hang (issue 12 item 2). Each case here was a 500, a stack overflow or a 30 s
// wait before the fix; the route fuzzer (fuzz-routes.test.ts) generates the same shapes at random.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ERROR_CATALOG, isErrorEnvelope, signedHeaders } from '@tollgate/protocol';
import { BODY_STALL_MS } from '../../src/http/transport.ts';
import { ROUTES } from '../../src/routes.ts';
import { backends } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type Creds, type TestServer } from '../helpers/server.ts';
import { nest, send, snapshot, validBody } from './fuzz-fixtures.ts';

/** Writes raw bytes on a fresh connection; resolves with what came back and how long it took. */
export function rawExchange(base: string, bytes: string, maxMs = 20_000): Promise<{ text: string; ms: number; closed: boolean }> {
  const u = new URL(base);
  const t0 = performance.now();
  return new Promise((resolve) => {
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ text, ms: performance.now() - t0, closed });
    };
    const sock = connect(Number(u.port), u.hostname, () => sock.write(bytes));
    sock.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      // One complete answer is enough: headers plus the body its Content-Length announces.
      const head = text.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
      if (head >= 0 && len && text.length >= head + 4 + Number(len[1])) finish(false);
    });
    sock.on('error', () => finish(true));
    sock.on('close', () => finish(true));
    const timer = setTimeout(() => finish(false), maxMs);
  });
}

for (const backend of backends()) {
  describe(`input the database or the signer cannot take (${backend})`, () => {
    let s: TestServer;
    let m: Creds;

    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()], http: { rateLimits: false }, role: 'api' });
      m = await setupMerchant(s, { topUp: '100.00', name: 'Limits' });
    });
    after(async () => s?.close());

    const session = (extra: Record<string, unknown>) => s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { checkout_type: 'DIRECT', price: '1.00', client_reference_id: `lim-${Math.random()}`, ...extra } });

    it('an escaped NUL or lone surrogate inside a *_json field is a 400 naming the field (was a 500 from the database)', async () => {
      const before = await snapshot(s);
      const cases: [string, string][] = [
        ['private_metadata_json', JSON.stringify({ email: 'a@example.com', note: 'gift\u0000wrap' })],
        ['private_metadata_json', JSON.stringify({ 'k\u0000': 'v' })],
        ['public_metadata_json', JSON.stringify({ note: 'x\u0000' })],
        ['public_metadata_json', '{"note":"\\ud800"}'],
        ['line_items_json', JSON.stringify([{ name: 'Tea\u0000', quantity: 1 }])],
        ['line_items_json', '[{"name":"\\udc00","quantity":1}]'],
      ];
      for (const [field, value] of cases) {
        assert.ok(!value.includes('\u0000'), 'the raw field is clean: only its decoded JSON holds the NUL');
        const r = await session({ [field]: value });
        assert.equal(r.status, 400, `${field}=${value}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_request');
        assert.equal(r.body.param, field);
      }
      assert.deepEqual(await snapshot(s), before, 'a refused session wrote nothing');
      const ok = await session({ private_metadata_json: JSON.stringify({ note: 'gift wrap 😀', tab: 'a\tb' }) });
      assert.equal(ok.status, 200, ok.text);
    });

    it('a 10,000-deep body with a valid API key and a bogus signature is a 400 on every route, before authentication (was a stack overflow, 500)', async () => {
      // Built as text: JSON.stringify itself would overflow on 10,000 levels.
      const deep = `{"a":${'{"a":['.repeat(5_000)}"x"${']}'.repeat(5_000)}}`;
      for (const route of ROUTES.filter((r) => r.method !== 'GET')) {
        const path = route.url.replace(/:([a-z_]+)/g, 'x1');
        const h = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, now: () => s.clock.now() });
        const headers = { ...h, 'x-sign': 'f'.repeat(64), authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
        const a = await send(s.url, { method: route.method, path, headers, body: deep });
        assert.equal(a.status, 400, `${route.method} ${route.url}: ${a.text}`);
        assert.equal(a.json.code, 'invalid_request', a.text);
        // Routes on GOAT's machine-payment wire carry the code in `error` and the sentence in `detail`.
        assert.match(route.errorWire ? a.json.detail : a.json.error, /nests deeper than 32/, `${route.method} ${route.url}: ${a.text}`);
        if (route.errorWire) assert.equal(a.json.error, 'invalid_request');
      }
      // At the bound it is an ordinary request: authentication (here: the bogus signature) decides.
      const h = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, now: () => s.clock.now() });
      const a = await send(s.url, { method: 'POST', path: '/api/v1/orders', headers: { ...h, 'x-sign': 'f'.repeat(64), 'content-type': 'application/json' }, body: JSON.stringify({ a: nest(31, 'x') }) });
      assert.equal(a.status, 401, a.text);
      assert.equal(a.json.code, 'invalid_signature');
    });

    it('redeliver since a date outside 1970..9999 is a 400 on since (was a 500 from the database)', async () => {
      const path = `/admin/v1/merchants/${m.merchantId}/webhook-deliveries/redeliver`;
      for (const since of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '9999-12-31T23:59:59-23:59', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:00Z']) {
        const r = await s.admin('POST', path, { since });
        assert.equal(r.status, 400, `${since}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_request');
        assert.equal(r.body.param, 'since');
      }
      for (const since of ['1970-01-01T00:00:00Z', '2026-11-21T10:00:00.123+02:00', '9999-12-31T23:59:59Z']) {
        const r = await s.admin('POST', path, { since });
        assert.equal(r.status, 200, `${since}: ${r.text}`);
      }
    });

    /** Sends each raw request; each must get a 4xx envelope and a closed connection within 3 s. */
    async function refusedPromptly(cases: Record<string, string>) {
      const before = await snapshot(s);
      for (const [name, bytes] of Object.entries(cases)) {
        const r = await rawExchange(s.url, bytes);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(r.text)?.[1] ?? 0);
        console.log(`[input-limits ${backend}] ${name}: ${status || 'no answer'} in ${r.ms.toFixed(0)} ms${r.closed ? ', closed' : ''}`);
        assert.ok(r.ms < 3_000, `${name}: answered after ${r.ms.toFixed(0)} ms`);
        assert.ok(status >= 400 && status < 500, `${name}: a 4xx, got ${r.text.slice(0, 200)}`);
        const json = JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4));
        assert.ok(isErrorEnvelope(json), `${name}: the error envelope, got ${r.text.slice(0, 300)}`);
        assert.equal(ERROR_CATALOG[json.code].status, status);
        assert.match(r.text, /\r\nconnection: close\r\n/i, 'the connection is closed after an ambiguous request');
      }
      assert.deepEqual(await snapshot(s), before, 'no merchant was created by a refused request');
      // The server still answers ordinary requests.
      assert.equal((await send(s.url, { method: 'GET', path: '/healthz', headers: {} })).status, 200);
    }
    const body = JSON.stringify(validBody(ROUTES.find((r) => r.url === '/admin/v1/merchants')!, 31337));
    const head = `POST /admin/v1/merchants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nContent-Type: application/json\r\n`;
    const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;

    it("Transfer-Encoding together with Content-Length gets the error envelope (400) and a close (was fastify's own JSON shape)", async () => {
      await refusedPromptly({
        'TE and CL': `${head}Transfer-Encoding: chunked\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${chunked}`,
        'CL and TE, CL first and too long': `${head}Content-Length: 5000\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`,
      });
    });

    it('a body shorter than its Content-Length, or an unterminated chunked body, is a 408 envelope within 3 s (was a 30 s hang)', async () => {
      await refusedPromptly({
        'CL longer than the body': `${head}Content-Length: ${Buffer.byteLength(body) + 100}\r\n\r\n${body}`,
        'chunked body never terminated': `${head}Transfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`,
      });
    });

    it('a request answered before its body arrived (415) gets that one answer, never a second one from the stall guard', async () => {
      const bytes = `POST /admin/v1/merchants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nContent-Type: text/plain\r\nContent-Length: 500\r\n\r\nname=short`;
      const u = new URL(s.url);
      const text = await new Promise<string>((resolve) => {
        let out = '';
        const sock = connect(Number(u.port), u.hostname, () => sock.write(bytes));
        sock.on('data', (c: Buffer) => (out += c.toString('latin1')));
        sock.on('error', () => {});
        // Longer than the stall bound: a second answer, if any, would be here by then.
        setTimeout(() => {
          sock.destroy();
          resolve(out);
        }, BODY_STALL_MS + 1_500);
      });
      assert.equal(text.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, text);
      assert.match(text, /^HTTP\/1\.1 415/);
      assert.match(text, /"code":"unsupported_media_type"/);
    });
  });
}
