// The hosted checkout routes over plain HTTP (no browser): security headers of the page, caching of
// the content-hashed assets, gzip, and their absence from the OpenAPI document.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { buildCheckoutAssets } from '@tollgate/checkout-ui';
import { CHECKOUT_CSP } from '../../src/hosted/routes.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('hosted checkout routes', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ backend: 'pglite' });
  });
  after(() => server?.close());

  test('GET /checkout/pay: HTML, no-store, strict CSP, no referrer, nosniff', async () => {
    const r = await fetch(`${server.url}/checkout/pay`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    const csp = r.headers.get('content-security-policy')!;
    assert.equal(csp, CHECKOUT_CSP);
    for (const d of ["default-src 'self'", "img-src 'self' https: data:", "connect-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"]) assert.ok(csp.includes(d), d);
    assert.ok(!/unsafe-inline|unsafe-eval|\*/.test(csp), 'no unsafe-* and no wildcard');
    const html = await r.text();
    const a = await buildCheckoutAssets();
    assert.equal(html, a.html);
  });

  test('assets: right types, gzip when asked, immutable for the current hash, ETag revalidation', async () => {
    const a = await buildCheckoutAssets();
    for (const [path, hash, type, text] of [
      ['/checkout/assets/app.js', a.jsHash, 'text/javascript; charset=utf-8', a.js],
      ['/checkout/assets/app.css', a.cssHash, 'text/css; charset=utf-8', a.css],
    ] as const) {
      const plain = await server.request('GET', path, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get('content-type'), type);
      assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(plain.headers.get('content-encoding'), null);
      assert.equal(plain.text, text);
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=0, must-revalidate');
      assert.equal(plain.headers.get('etag'), `"${hash}"`);

      const hashed = await server.request('GET', `${path}?v=${hash}`);
      assert.equal(hashed.headers.get('cache-control'), 'public, max-age=31536000, immutable');

      const stale = await server.request('GET', `${path}?v=0000000000000000`);
      assert.equal(stale.headers.get('cache-control'), 'public, max-age=0, must-revalidate', 'an old hash is not pinned for a year');

      const again = await server.request('GET', path, { headers: { 'if-none-match': `W/"${hash}"` } });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');

      // undici's fetch decompresses; read the raw bytes through node:http semantics instead.
      const gz = await rawGet(`${server.url}${path}`, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(gz.headers.vary, 'Accept-Encoding');
      assert.equal(gunzipSync(gz.body).toString('utf8'), text);
    }
    const js = await rawGet(`${server.url}/checkout/assets/app.js`, { 'accept-encoding': 'gzip' });
    assert.ok(js.body.length < 20 * 1024, `served JS is ${js.body.length} bytes gzipped (budget 20 KB)`);
  });

  test('favicon: the page links it, /checkout/assets/favicon.svg and /favicon.ico answer 200 with the SVG', async () => {
    const a = await buildCheckoutAssets();
    for (const path of ['/checkout/assets/favicon.svg', `/checkout/assets/favicon.svg?v=${a.faviconHash}`, '/favicon.ico']) {
      const r = await server.request('GET', path, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get('content-type'), 'image/svg+xml', path);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(r.text, a.favicon);
    }
    const pinned = await server.request('GET', `/checkout/assets/favicon.svg?v=${a.faviconHash}`);
    assert.equal(pinned.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  });

  test('the hosted routes are not in the OpenAPI document; HEAD works; unknown assets are 404 envelopes', async () => {
    const doc = await server.request('GET', '/openapi.json');
    const paths = Object.keys(doc.body.paths);
    assert.ok(
      paths.every((p) => !p.startsWith('/checkout/pay') && !p.startsWith('/checkout/assets') && p !== '/favicon.ico'),
      paths.join(', '),
    );
    const head = await fetch(`${server.url}/checkout/pay`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    const missing = await server.request('GET', '/checkout/assets/other.js');
    assert.equal(missing.status, 404);
    assert.equal(typeof missing.body.request_id, 'string');
    // The page's lazily loaded chunks are served beside app.js (src/browser/chunk.ts loads them).
    for (const chunk of ['receipt', 'card']) {
      const res = await fetch(`${server.url}/checkout/assets/${chunk}.js`);
      assert.deepEqual([res.status, res.headers.get('content-type'), res.headers.get('x-content-type-options')], [200, 'text/javascript; charset=utf-8', 'nosniff'], chunk);
      assert.match(await res.text(), new RegExp(`tollgate_${chunk}`));
    }
  });
});

async function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}
