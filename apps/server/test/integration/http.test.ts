import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ERROR_CATALOG, isId } from '@tollgate/protocol';
import { openPostgres } from '../../src/db/postgres.ts';
import { startTollgate, type Tollgate } from '../../src/main.ts';
import { ROUTES } from '../../src/routes.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { buildConfig, fakeChain, startTestServer, TEST_ADMIN_TOKEN, type TestResponse, type TestServer } from '../helpers/server.ts';

const OBSERVABILITY_PATHS = ['/healthz', '/readyz', '/metrics', '/openapi.json'];

/** Asserts the error envelope (docs/errors.md), with the request id echoed in the header. */
function assertEnvelope(r: TestResponse, status: number, code: string) {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(r.body.code, code, r.text);
  assert.equal(typeof r.body.error, 'string');
  assert.ok(isId('req', r.body.request_id), r.body.request_id);
  assert.equal(r.headers.get('x-request-id'), r.body.request_id);
}

/** A raw HTTP/1.1 request with a chunked body (no Content-Length), for the body limit. */
function chunkedPost(url: string, path: string, chunks: string[], headers: Record<string, string>): Promise<{ status: number; body: any; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), requestId: res.headers['x-request-id'] as string | undefined }));
    });
    // The server may answer 413 and close before the whole body is written.
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('HTTP foundation', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ backend: 'pglite', chains: [fakeChain()] });
  });
  after(() => server.close());

  describe('health, readiness, metrics', () => {
    it('/healthz is 200', async () => {
      const r = await server.request('GET', '/healthz');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'ok' });
    });

    it('/readyz is 200 while the database answers', async () => {
      const r = await server.request('GET', '/readyz');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { status: 'ready' });
    });

    it('/metrics exposes the request histogram labelled by route pattern, never by concrete path', async () => {
      const m = await server.createMerchant({ merchantId: 'metrics_concrete_merchant' });
      await server.request('GET', `/merchants/${m.merchantId}`);
      await server.request('GET', '/merchants/metrics_unknown_merchant');
      await server.admin('GET', `/admin/v1/merchants/${m.merchantId}`);
      await server.admin('DELETE', `/admin/v1/merchants/${m.merchantId}/api-keys/tg_test_metrics_key_id`);
      await server.request('GET', '/no/such/route/metrics_unmatched_path');
      await server.request('GET', '/checkout/v1/sessions/cs_metricsSecretSession');
      const r = await server.request('GET', '/metrics');
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
      const text = r.text;
      assert.match(text, /# TYPE tollgate_http_request_duration_seconds histogram/);
      assert.match(text, /tollgate_http_request_duration_seconds_count\{method="GET",route="\/merchants\/:merchant_id",status="200"\} \d+/);
      assert.match(text, /tollgate_http_request_duration_seconds_count\{method="GET",route="\/merchants\/:merchant_id",status="404"\} \d+/);
      assert.match(text, /route="\/admin\/v1\/merchants\/:merchant_id\/api-keys\/:api_key"/);
      for (const concrete of ['metrics_concrete_merchant', 'metrics_unknown_merchant', 'tg_test_metrics_key_id', 'metrics_unmatched_path', 'metricsSecretSession', 'cs_']) {
        assert.equal(text.includes(concrete), false, `metrics contain the concrete value ${concrete}`);
      }
      const known = new Set([...ROUTES.map((x) => x.url), ...OBSERVABILITY_PATHS, 'unmatched']);
      const routes = [...text.matchAll(/^tollgate_http_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)].map((x) => x[1]!);
      assert.ok(routes.length > 0);
      for (const route of routes) assert.ok(known.has(route), `unexpected route label ${route}`);
      assert.match(text, /process_cpu_user_seconds_total/, 'default process metrics are collected');
    });
  });

  describe('/openapi.json', () => {
    let doc: any;
    before(async () => {
      const r = await server.request('GET', '/openapi.json');
      assert.equal(r.status, 200, r.text);
      doc = r.body;
    });

    it('is OpenAPI 3.1', () => {
      assert.equal(doc.openapi, '3.1.0');
      assert.equal(doc.info.title, 'Tollgate');
      assert.ok(doc.components.securitySchemes.merchantHmac);
      assert.ok(doc.components.securitySchemes.adminBearer);
    });

    it('documents every route of ROUTES under its path, with its auth', () => {
      for (const r of ROUTES) {
        const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        const op = doc.paths[path]?.[r.method.toLowerCase()];
        assert.ok(op, `${r.method} ${path} missing from the OpenAPI document`);
        assert.equal(op.summary, r.summary);
        const expectedSecurity = r.auth === 'merchant' ? [{ merchantHmac: [] }] : r.auth === 'admin' ? [{ adminBearer: [] }] : r.auth === 'portal' ? [{ portalSession: [] }] : undefined;
        assert.deepEqual(op.security, expectedSecurity, `${r.method} ${path} security`);
        for (const [, name] of r.url.matchAll(/:([A-Za-z0-9_]+)/g)) {
          assert.ok(
            (op.parameters ?? []).some((p: { in: string; name: string; required?: boolean }) => p.in === 'path' && p.name === name && p.required),
            `${r.method} ${path}: path parameter ${name} not documented`,
          );
        }
        for (const status of Object.keys(r.response)) assert.ok(op.responses[status], `${r.method} ${path}: response ${status} missing`);
        assert.ok(op.responses['400'] && op.responses['401'] && op.responses['404'], `${r.method} ${path}: error envelope responses missing`);
      }
    });

    it('has no operation beyond ROUTES (observability routes are hidden)', () => {
      const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
        Object.keys(ops)
          .filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m))
          .map((m) => `${m.toUpperCase()} ${p}`),
      );
      const expected = ROUTES.map((r) => `${r.method} ${r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
      assert.deepEqual(documented.sort(), expected.sort());
      for (const p of OBSERVABILITY_PATHS) assert.equal(doc.paths[p], undefined);
    });

    it('lists every code of the error catalog', () => {
      for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
        assert.ok(doc.info.description.includes(`\`${code}\` (${entry.status})`), `code ${code} not documented`);
      }
    });
  });

  describe('errors use the envelope', () => {
    it('an unknown path is 404 not_found', async () => {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['POST', '/api/v2/orders'],
        ['GET', '/admin/v1/merchants/x/y/z'],
      ] as const) {
        const r = await server.request(method, path, method === 'POST' ? { body: {} } : {});
        assertEnvelope(r, 404, 'not_found');
        assert.equal(r.headers.get('allow'), null);
      }
    });

    it('a known path with the wrong method is 405 with Allow', async () => {
      const cases: [string, string, string][] = [
        ['DELETE', '/healthz', 'GET'],
        ['POST', '/readyz', 'GET'],
        ['PUT', '/admin/v1/merchants', 'POST'],
        ['GET', '/admin/v1/merchants', 'POST'],
        ['POST', '/merchants/some_merchant', 'GET'],
        ['GET', '/admin/v1/merchants/m1/api-keys', 'POST'],
        ['PATCH', '/admin/v1/merchants/m1/api-keys/k1', 'DELETE'],
        ['POST', '/api/v1/merchant/', 'GET'],
      ];
      for (const [method, path, allow] of cases) {
        const r = await server.request(method, path, method === 'GET' || method === 'DELETE' ? {} : { body: {} });
        assertEnvelope(r, 405, 'method_not_allowed');
        assert.equal(r.headers.get('allow'), allow, `${method} ${path}`);
      }
    });

    it('a body over 64 KiB is 413 payload_too_large; just under is parsed', async () => {
      const over = JSON.stringify({ name: 'x'.repeat(64 * 1024) });
      const r = await server.request('POST', '/admin/v1/merchants', { rawBody: over, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assertEnvelope(r, 413, 'payload_too_large');
      const exact = JSON.stringify({ name: 'y'.repeat(64 * 1024 - '{"name":""}'.length) });
      assert.equal(Buffer.byteLength(exact), 64 * 1024);
      const ok = await server.request('POST', '/admin/v1/merchants', { rawBody: exact, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.notEqual(ok.status, 413, ok.text);
      assertEnvelope(ok, 400, 'invalid_request'); // name longer than 200, but the body was read
    });

    it('a chunked body over 64 KiB (no Content-Length) is 413 too', async () => {
      const chunk = 'z'.repeat(16 * 1024);
      const r = await chunkedPost(server.url, '/admin/v1/merchants', ['{"name":"', chunk, chunk, chunk, chunk, chunk, '"}'], {
        'content-type': 'application/json',
        authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
      });
      assert.equal(r.status, 413);
      assert.equal(r.body.code, 'payload_too_large');
      assert.equal(r.requestId, r.body.request_id);
    });

    it('a text/plain body is 415 unsupported_media_type', async () => {
      for (const ct of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const before = (await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM merchants')).rows[0]!.n;
        const r = await server.request('POST', '/admin/v1/merchants', {
          rawBody: '{"name":"typed as text"}',
          headers: { 'content-type': ct, authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        });
        assertEnvelope(r, 415, 'unsupported_media_type');
        const afterCount = (await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM merchants')).rows[0]!.n;
        assert.equal(afterCount, before, `${ct}: nothing written`);
      }
    });

    it('JSON media types are matched case-insensitively, with parameters', async () => {
      for (const ct of ['application/json; charset=utf-8', 'Application/JSON']) {
        const r = await server.request('POST', '/admin/v1/merchants', {
          rawBody: JSON.stringify({ name: `ct ${ct}` }),
          headers: { 'content-type': ct, authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        });
        assert.equal(r.status, 201, `${ct}: ${r.text}`);
      }
    });

    it('malformed JSON is 400 invalid_json', async () => {
      for (const raw of ['{"name": ', '{name: "x"}', '{"name":"x"}}', "{'name':'x'}", 'nul']) {
        const r = await server.request('POST', '/admin/v1/merchants', { rawBody: raw, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
        assertEnvelope(r, 400, 'invalid_json');
      }
    });

    it('a JSON body with a __proto__ key is refused, not merged', async () => {
      const r = await server.request('POST', '/admin/v1/merchants', {
        rawBody: '{"name":"proto","__proto__":{"receive_type":"DELEGATE"}}',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      assertEnvelope(r, 400, 'invalid_json');
    });

    it('an empty JSON body where one is required is 400 invalid_request', async () => {
      const r = await server.request('POST', '/admin/v1/merchants', { rawBody: '', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assertEnvelope(r, 400, 'invalid_request');
    });
  });

  describe('request ids', () => {
    it('every response carries x-request-id (equal to the body request_id on errors) and nosniff', async () => {
      const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
      const responses: TestResponse[] = [
        await server.request('GET', '/healthz'),
        await server.request('GET', '/readyz'),
        await server.request('GET', '/metrics'),
        await server.request('GET', '/openapi.json'),
        await server.admin('POST', '/admin/v1/merchants', { name: 'Request id' }),
        await server.admin('GET', '/admin/v1/merchants/nobody'),
        await server.request('GET', '/admin/v1/merchants/nobody'),
        await server.request('GET', '/nope'),
        await server.request('DELETE', '/healthz'),
        await server.request('POST', '/admin/v1/merchants', { rawBody: '{', headers: auth }),
        await server.request('POST', '/admin/v1/merchants', { rawBody: 'x', headers: { ...auth, 'content-type': 'text/plain' } }),
        await server.request('POST', '/admin/v1/merchants', { rawBody: JSON.stringify({ name: 'x'.repeat(70_000) }), headers: auth }),
        await server.request('GET', '/api/v1/merchant'),
      ];
      const ids = new Set<string>();
      for (const r of responses) {
        const id = r.headers.get('x-request-id');
        assert.ok(isId('req', id), `${id}: ${r.status} ${r.text.slice(0, 80)}`);
        if (r.status >= 400) assert.equal(r.body.request_id, id, r.text);
        // A JSON body may echo merchant-chosen strings: no browser may sniff it into a script or page.
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff', `${r.status} ${r.text.slice(0, 80)}`);
        ids.add(id!);
      }
      assert.equal(ids.size, responses.length, 'request ids are unique');
    });

    it('a client-supplied x-request-id is not trusted', async () => {
      const r = await server.request('GET', '/nope', { headers: { 'x-request-id': 'req_attacker_forged' } });
      assert.notEqual(r.headers.get('x-request-id'), 'req_attacker_forged');
      assert.ok(isId('req', r.body.request_id), r.body.request_id);
    });
  });
});

for (const backend of backends()) {
  describe(`/readyz with the database gone (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ backend });
    });
    after(async () => {
      await server.tg.close();
      await server.database.drop().catch(() => {});
    });

    it('is 503 service_unavailable with the envelope, and /healthz stays 200', async () => {
      assert.equal((await server.request('GET', '/readyz')).status, 200);
      await server.db.close();
      const r = await server.request('GET', '/readyz');
      assertEnvelope(r, 503, 'service_unavailable');
      assert.equal(r.text.includes('postgres://'), false, 'no connection details');
      assert.equal((await server.request('GET', '/healthz')).status, 200);
    });
  });
}

/** A TCP proxy in front of Postgres that the test can cut, like a database host going away. */
async function startProxy(target: URL): Promise<{ url: string; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as AddressInfo).port;
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cut: async () => {
      const closed = new Promise<void>((resolve) => proxy.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

if (backends().includes('postgres')) {
  describe('Postgres outage (postgres)', () => {
    let database: TestDatabase;
    let tg: Tollgate;
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    let url: string;
    before(async () => {
      database = await openTestDatabase('postgres');
      proxy = await startProxy(new URL(database.url!));
      const db = await openPostgres(proxy.url, { max: 4, connectionTimeoutMillis: 1000 });
      tg = await startTollgate(buildConfig({ chains: [fakeChain()] }), { db, http: { logger: false } });
      url = tg.url!;
    });
    after(async () => {
      await tg.close();
      await tg.deps.db.close().catch(() => {});
      await database.drop();
    });

    const get = async (path: string): Promise<TestResponse> => {
      const res = await fetch(url + path);
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
    };

    it('readiness and database-backed routes answer 503 service_unavailable (with Retry-After), never hang or 500', async () => {
      assert.equal((await get('/readyz')).status, 200);
      assert.equal((await get('/merchants/anyone')).status, 404);
      await proxy.cut();
      const ready = await get('/readyz');
      assertEnvelope(ready, 503, 'service_unavailable');
      const started = Date.now();
      const r = await get('/merchants/anyone');
      assertEnvelope(r, 503, 'service_unavailable');
      assert.ok(r.headers.get('retry-after'), 'Retry-After is set');
      assert.ok(Date.now() - started < 10_000, 'answered within the connection timeout');
      assert.equal((await get('/healthz')).status, 200, 'liveness does not depend on the database');
    });
  });
}
