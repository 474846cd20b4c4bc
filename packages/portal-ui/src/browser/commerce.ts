// The lazily loaded part of the portal (page-assets chunk `commerce`, loaded by main.ts through
// checkout-ui's chunk.ts): products and payment links, machine payments, the order page's refund panel. Kept out of app.js so the
// first download stays within its budget (test/portal/portal-pages.test.ts).
import { linkSessionsPage, linksPage } from './pages-links.ts';
import { machinePage } from './pages-machine.ts';
import { refundPanel } from './refunds.ts';

export const commerce = { linksPage, linkSessionsPage, machinePage, refundPanel };
(window as unknown as { tollgate_commerce: typeof commerce }).tollgate_commerce = commerce;
