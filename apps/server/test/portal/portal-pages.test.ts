// The portal page over plain HTTP: /portal redirects to /portal/, strict CSP and no-store on the
// page, a small bundle, and the page routes hidden from the OpenAPI document (the JSON routes are in it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildPortalAssets } from '@tollgate/portal-ui';
import { PORTAL_CSP } from '../../src/portal/pages.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('portal page routes', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ backend: 'pglite', role: 'api' });
  });
  after(() => server?.close());

  test('/portal → /portal/; the page: strict CSP, no-store, DENY framing, nosniff', async () => {
    const r = await fetch(`${server.url}/portal`, { redirect: 'manual' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get('location'), '/portal/');
    const p = await fetch(`${server.url}/portal/`);
    assert.equal(p.status, 200);
    assert.equal(p.headers.get('content-security-policy'), PORTAL_CSP);
    assert.ok(!/unsafe-inline|unsafe-eval|\*/.test(PORTAL_CSP));
    assert.equal(p.headers.get('cache-control'), 'no-store');
    assert.equal(p.headers.get('x-frame-options'), 'DENY');
    assert.equal(p.headers.get('x-content-type-options'), 'nosniff');
    const html = await p.text();
    assert.match(html, /assets\/app\.js\?v=[0-9a-f]{16}/);
    assert.doesNotMatch(html, /<script>|style=/, 'no inline script or style');
  });

  test('the bundle stays small (gzipped JS under 12 KB) and carries no external URL', async () => {
    const a = await buildPortalAssets();
    assert.ok(a.jsGzipBytes < 12_000, `${a.jsGzipBytes} bytes gzipped`);
    // The SVG namespace and the placeholder of the endpoint field are names, not requests.
    const urls = [...(a.js + a.css).matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => !u.startsWith('http://www.w3.org/2000/svg') && !u.startsWith('https://shop.example/'));
    assert.deepEqual(urls, [], 'no external URL');
    const js = await fetch(`${server.url}/portal/assets/app.js?v=${a.jsHash}`);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    // The lazily loaded part (products and links, machine payments): small too, same rules, served beside app.js.
    const chunk = a.chunks?.commerce;
    assert.ok(chunk && chunk.gzipBytes < 6_000, `commerce chunk: ${chunk?.gzipBytes} bytes gzipped`);
    assert.deepEqual(
      [...chunk.js.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => !u.startsWith('http://www.w3.org/2000/svg')),
      [],
    );
    const served = await fetch(`${server.url}/portal/assets/commerce.js?v=${chunk.hash}`);
    assert.equal(served.status, 200);
    assert.equal(await served.text(), chunk.js);
  });

  test('OpenAPI: the JSON routes are documented under the portal tag, the page routes are not', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { tags?: string[] }>> };
    assert.equal(doc.paths['/portal/'], undefined);
    assert.deepEqual(doc.paths['/portal/api/orders']?.get?.tags, ['portal']);
    assert.ok(Object.keys(doc.paths).filter((p) => p.startsWith('/portal/api/')).length >= 25);
  });
});
