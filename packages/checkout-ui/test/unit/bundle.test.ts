import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCheckoutAssets } from '../../src/index.ts';

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
