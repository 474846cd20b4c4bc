// Node side of the merchant portal: its page assets, built like every Tollgate page
// (@tollgate/checkout-ui/page-assets). No CDN, no external request: the page loads only its two
// assets and talks only to its own origin.
import { pageAssets, type PageAssets } from '@tollgate/checkout-ui/page-assets';

/** The portal's assets; asset URLs resolve against `/portal/`. */
export type PortalAssets = PageAssets;

/** @example const { html, js, css } = await buildPortalAssets(); */
export const buildPortalAssets = pageAssets({
  name: 'portal',
  root: new URL('..', import.meta.url),
  entry: 'src/browser/main.ts',
  stylesheet: 'src/portal.css',
  template: 'index.html',
  favicon: 'src/favicon.svg',
  banner: '/* Tollgate merchant portal */',
  assetBase: 'assets/',
  // Loaded when first needed (main.ts): products and payment links, machine payments.
  chunks: { commerce: 'src/browser/commerce.ts' },
});
