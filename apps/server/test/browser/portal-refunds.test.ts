// The order page's refund panel in Chromium at 1280 and 375 px with axe: an owner refunds part of a
// paid card order with an amount, sees the refund listed and an over-refund refused with the
// server's message; a viewer sees the refunds but no form. Screenshots: test-artifacts/checkout/portal-refunds-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { addPortalUser } from '../helpers/portal.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from '../integration/checkout-fixtures.ts';
import { CARD, createCardSession, payCard, setupCardMerchant, startCard } from '../integration/card-fixtures.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';

const skip = browserUnavailable();

describe('portal: refund an order (browser)', { skip, timeout: 240_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let m: Creds;
  const pw: Record<string, string> = {};
  let paid: string;

  before(async () => {
    [s, browser] = await Promise.all([startCheckoutServer('pglite'), launchBrowser()]);
    m = await setupCardMerchant(s);
    pw.owner = await addPortalUser(s, m.merchantId, 'owner@refunds.example');
    pw.viewer = await addPortalUser(s, m.merchantId, 'viewer@refunds.example', 'viewer');
    const { checkout_id } = await createCardSession(s, m);
    paid = (await startCard(s, checkout_id)).body.order_id;
    assert.equal((await payCard(s, checkout_id, CARD.success)).status, 200);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  async function openOrder(page: Page, who: 'owner' | 'viewer') {
    await page.goto(`${s.url}/portal`);
    await page.getByLabel('Email').fill(`${who}@refunds.example`);
    await page.getByLabel('Password').fill(pw[who]!);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.goto(`${s.url}/portal/#/orders/${paid}`);
    await page.getByRole('heading', { name: `Order ${paid}` }).waitFor();
  }
  async function clean(page: Page, watch: Awaited<ReturnType<typeof watchPage>>, what: string) {
    assert.deepEqual(await axeSerious(page), [], `axe on ${what}`);
    assert.deepEqual(await watch.cspViolations(page), [], `CSP on ${what}`);
  }

  for (const [width, height] of [
    [1280, 900],
    [375, 812],
  ] as const) {
    test(`${width} px: an owner refunds 2.00 EUR, then an over-refund is refused with the reason; nothing sideways`, async () => {
      const context = await browser.newContext({ viewport: { width, height }, ...(width < 500 ? { isMobile: true, hasTouch: true } : {}) });
      const watch = await watchPage(context);
      const page = await context.newPage();
      await openOrder(page, 'owner');
      const panel = page.locator('#refunds');
      const before = await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM refunds WHERE order_id = $1', [paid]);
      await panel.getByLabel('Amount (EUR)').fill('2.00');
      await panel.getByLabel('Reason (optional)').fill(`portal ${width}`);
      await panel.getByRole('button', { name: 'Refund' }).click();
      await panel
        .getByRole('status')
        .filter({ hasText: /2\.00 EUR, succeeded/ })
        .waitFor();
      await panel.getByRole('table', { name: 'Refunds of this order' }).getByText(`2.00 EUR`).first().waitFor();
      const { rows } = await s.db.query<{ amount: string; status: string; reason: string }>('SELECT amount::text AS amount, status, reason FROM refunds WHERE order_id = $1 ORDER BY created_at', [paid]);
      assert.equal(rows.length, before.rows[0]!.n + 1);
      assert.deepEqual(rows.at(-1), { amount: '200', status: 'succeeded', reason: `portal ${width}` });

      await panel.getByLabel('Amount (EUR)').fill('99.00');
      await panel.getByRole('button', { name: 'Refund' }).click();
      await panel
        .getByRole('alert')
        .filter({ hasText: /remains to refund/ })
        .waitFor();
      assert.equal((await s.db.query('SELECT 1 FROM refunds WHERE order_id = $1', [paid])).rows.length, rows.length, 'the refused refund recorded nothing');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `no sideways scroll at ${width} px (${overflow})`);
      await clean(page, watch, `refund panel at ${width} px`);
      await screenshot(page, `portal-refunds-owner-${width}`);
      await context.close();
    });
  }

  test('a viewer sees the refunds but no refund form; the route refuses the role', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const watch = await watchPage(context);
    const page = await context.newPage();
    await openOrder(page, 'viewer');
    await page.locator('#refunds').getByRole('table', { name: 'Refunds of this order' }).waitFor();
    assert.equal(await page.locator('[data-refund-form]').count(), 0);
    const answer = await page.evaluate(async (id) => {
      // the viewer's own CSRF token, so only the role can refuse it
      const csrf = (await (await fetch('/portal/api/session')).json()).csrf_token;
      const r = await fetch(`/portal/api/orders/${id}/refunds`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: '{}' });
      return [r.status, (await r.json()).code];
    }, paid);
    assert.deepEqual(answer, [403, 'forbidden']);
    await clean(page, watch, 'viewer order page');
    await screenshot(page, 'portal-refunds-viewer-1280');
    await context.close();
  });
});
