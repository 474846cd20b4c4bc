// Node side of the hosted quick-pay link page: the same build as the checkout page (index.ts) for
// another entry point. It shares the checkout page's modules (views, wallet, QR, money), its
// stylesheet (imported by quickpay.css) and its icon; no CDN, no external request.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { contentHash, type CheckoutAssets } from './index.ts';

const PKG = fileURLToPath(new URL('..', import.meta.url));
let cached: Promise<CheckoutAssets> | undefined;

/**
 * Builds (first call) or returns the link page assets. Asset URLs in the HTML are relative to
 * `/quickpay/pay/<link id>` (`../assets/app.js?v=<hash>`).
 *
 * @example const { html, js, css } = await buildQuickpayAssets();
 */
export function buildQuickpayAssets(): Promise<CheckoutAssets> {
  cached ??= doBuild().catch((err) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function doBuild(): Promise<CheckoutAssets> {
  const common = { bundle: true, minify: true, write: false, sourcemap: false, logLevel: 'silent', absWorkingDir: PKG } as const;
  const [jsOut, cssOut, template, favicon] = await Promise.all([
    build({
      ...common,
      entryPoints: ['src/browser/quickpay.ts'],
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      charset: 'utf8',
      legalComments: 'none',
      banner: { js: '/* Tollgate quick-pay. Includes qrcode-generator (c) Kazuhiko Arase, MIT license. */' },
    }),
    build({ ...common, entryPoints: ['src/quickpay.css'], target: ['chrome90', 'firefox90', 'safari14'], charset: 'utf8' }),
    readFile(new URL('../quickpay.html', import.meta.url), 'utf8'),
    readFile(new URL('favicon.svg', import.meta.url), 'utf8'),
  ]);
  const js = jsOut.outputFiles[0]!.text;
  const css = cssOut.outputFiles[0]!.text;
  const [jsHash, cssHash, faviconHash] = [contentHash(js), contentHash(css), contentHash(favicon)];
  const html = template
    .replace('{{JS_URL}}', `../assets/app.js?v=${jsHash}`)
    .replace('{{CSS_URL}}', `../assets/app.css?v=${cssHash}`)
    .replace('{{ICON_URL}}', `../assets/favicon.svg?v=${faviconHash}`);
  return { html, js, css, favicon, jsGzipBytes: gzipSync(js, { level: 9 }).length, jsHash, cssHash, faviconHash };
}
