// Node side of the hosted checkout: the page's assets (page-assets.ts builds them). No CDN, no
// external request: the page loads only its two assets and talks only to its own origin.
import { pageAssets, type PageAssets } from './page-assets.ts';

export { contentHash } from './page-assets.ts';
/** The checkout page's assets; asset URLs resolve against `/checkout/pay`; the JS budget is 20 KB gzipped. */
export type CheckoutAssets = PageAssets;

/** @example const { html, js, css } = await buildCheckoutAssets(); */
export const buildCheckoutAssets = pageAssets({
  name: 'checkout',
  root: new URL('..', import.meta.url),
  entry: 'src/browser/main.ts',
  stylesheet: 'src/checkout.css',
  template: 'index.html',
  favicon: 'src/favicon.svg',
  banner: '/* Tollgate checkout. Includes qrcode-generator (c) Kazuhiko Arase, MIT license. */',
  assetBase: 'assets/',
  // Loaded when needed (browser/chunk.ts): the completion screen with its receipt, the card flow.
  chunks: { receipt: 'src/browser/receipt.ts', card: 'src/browser/card.ts' },
});
