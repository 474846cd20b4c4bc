// Node side of the hosted quick-pay link page: the checkout page's build (page-assets.ts) for
// another entry point. It shares the checkout page's modules (views, wallet, QR, money), its
// stylesheet (imported by quickpay.css) and its icon; no CDN, no external request.
import type { CheckoutAssets } from './index.ts';
import { pageAssets } from './page-assets.ts';

/**
 * The link page's assets. Asset URLs in the HTML are relative to `/quickpay/pay/<link id>`
 * (`../assets/app.js?v=<hash>`).
 *
 * @example const { html, js, css } = await buildQuickpayAssets();
 */
export const buildQuickpayAssets: () => Promise<CheckoutAssets> = pageAssets({
  name: 'quickpay',
  root: new URL('..', import.meta.url),
  entry: 'src/browser/quickpay.ts',
  stylesheet: 'src/quickpay.css',
  template: 'quickpay.html',
  favicon: 'src/favicon.svg',
  banner: '/* Tollgate quick-pay. Includes qrcode-generator (c) Kazuhiko Arase, MIT license. */',
  assetBase: '../assets/',
  // As on the checkout page (index.ts): the receipt and the card flow load when needed.
  chunks: { receipt: 'src/browser/receipt.ts', card: 'src/browser/card.ts' },
});
