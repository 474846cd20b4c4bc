import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCheckoutAssets } from '../../src/index.ts';
import { buildQuickpayAssets } from '../../src/quickpay-assets.ts';

// Issue 12: the payer's phone downloads this on a mobile network before it can show anything.
const JS_BUDGET_GZIP = 20 * 1024;

test('bundle: built once, minified, under 20 KB gzipped, no external URL', async () => {
  const a = await buildCheckoutAssets();
  assert.equal(await buildCheckoutAssets(), a, 'cached: the same object on the second call');
  assert.ok(a.jsGzipBytes > 1000 && a.jsGzipBytes < JS_BUDGET_GZIP, `gzipped JS is ${a.jsGzipBytes} bytes (budget ${JS_BUDGET_GZIP})`);
  assert.ok(!a.js.includes('sourceMappingURL'), 'no source map');
  assert.ok(!/\n {2}/.test(a.js), 'minified');
  // No CDN, font or script from elsewhere: the only absolute URL in the bundle is the SVG namespace.
  const urls = [...a.js.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => u !== 'http://www.w3.org/2000/svg');
  assert.deepEqual(urls, []);
  assert.ok(!/https?:\/\//.test(a.css), 'no external URL in the CSS');
  assert.ok(!/@import|@font-face/.test(a.css));
  assert.ok(!/\bviem\b/.test(a.js), 'no viem in the bundle');
});

// Issue 29 item 12: the completion screen with its receipt and the card flow load when needed
// (src/browser/chunk.ts), which keeps the first download inside the budget with room to spare.
test('chunks: the receipt and the card flow are built apart, small, named by hash in the page bundle', async () => {
  const a = await buildCheckoutAssets();
  assert.deepEqual(Object.keys(a.chunks ?? {}).sort(), ['card', 'receipt']);
  for (const [name, c] of Object.entries(a.chunks!)) {
    assert.ok(c.gzipBytes > 300 && c.gzipBytes < 6 * 1024, `${name}: ${c.gzipBytes} bytes gzipped`);
    assert.match(c.hash, /^[0-9a-f]{16}$/);
    assert.ok(a.js.includes(`${name}.js?v=${c.hash}`), `the page names ${name}'s current build`);
    const urls = [...c.js.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => u !== 'http://www.w3.org/2000/svg');
    assert.deepEqual(urls, [], `${name}: no external URL`);
    assert.ok(!/\bviem\b|bad rs block/.test(c.js), `${name}: no viem, no QR library`);
  }
  assert.ok(a.js.includes('bad rs block'), 'the check above can fail: the page itself has the QR library');
  // What the chunks hold is not in the first download.
  assert.ok(a.chunks!.receipt!.js.includes('Download receipt') && !a.js.includes('Download receipt'));
  assert.ok(a.chunks!.card!.js.includes('Expiry (MM/YY)') && !a.js.includes('Expiry (MM/YY)'));
  assert.ok(a.jsGzipBytes + a.chunks!.receipt!.gzipBytes + a.chunks!.card!.gzipBytes > JS_BUDGET_GZIP, 'without the split the page would be over its budget');
});

// The quick-pay link page is opened on the same phones (a shared link, a QR code on a counter):
// the same budget, and the same chunks, loaded only by a payer who reaches them.
test('quick-pay page: under the same 20 KB gzipped, the receipt and the card flow as chunks', async () => {
  const q = await buildQuickpayAssets();
  assert.ok(q.jsGzipBytes > 1000 && q.jsGzipBytes < JS_BUDGET_GZIP, `gzipped JS is ${q.jsGzipBytes} bytes (budget ${JS_BUDGET_GZIP})`);
  assert.deepEqual(Object.keys(q.chunks ?? {}).sort(), ['card', 'receipt']);
  for (const name of ['card', 'receipt']) assert.ok(q.js.includes(`${name}.js?v=${q.chunks![name]!.hash}`), `the page names ${name}'s current build`);
  assert.ok(!q.js.includes('Download receipt') && !q.js.includes('Expiry (MM/YY)'), 'what the chunks hold is not in the first download');
  const urls = [...q.js.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => u !== 'http://www.w3.org/2000/svg');
  assert.deepEqual(urls, []);
});

test('html: relative, content-hashed asset URLs and no inline script or style', async () => {
  const a = await buildCheckoutAssets();
  assert.ok(a.html.includes(`src="assets/app.js?v=${a.jsHash}"`));
  assert.ok(a.html.includes(`href="assets/app.css?v=${a.cssHash}"`));
  assert.ok(a.html.includes(`<link rel="icon" type="image/svg+xml" href="assets/favicon.svg?v=${a.faviconHash}">`));
  assert.match(a.favicon, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.ok(!/<script|href=|on\w+=/i.test(a.favicon), 'the icon is inert');
  assert.match(a.jsHash, /^[0-9a-f]{16}$/);
  assert.ok(!/<script>|<script(?![^>]*\bsrc=)[^>]*>/.test(a.html), 'no inline script');
  assert.ok(!/<style|style=/.test(a.html), 'no inline style');
  assert.ok(!a.html.includes('{{'), 'template fully filled');
});
