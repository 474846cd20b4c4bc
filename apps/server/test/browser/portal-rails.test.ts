// The portal's orders for every rail in Chromium at 1280 and 375 px with axe: card orders paid with
// the TEST processor read as card orders (processor, reference, Visa •••• 4242, EUR amount; no chain,
// payer address or pay-to), a DELEGATE order shows its callback, decoded failure and refund, status
// labels carry the enum on hover, the list fits 1280 px and becomes cards at 375 px, and the
// overview's charts have axes with dates and amounts. Screenshots: test-artifacts/checkout/portal-rails-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { buildOrderBody } from '../helpers/orders.ts';
import { addPortalUser } from '../helpers/portal.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from '../integration/checkout-fixtures.ts';
import { CARD, createCardSession, payCard, setupCardMerchant, startCard } from '../integration/card-fixtures.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';

const skip = browserUnavailable();
const FAILURE = 'callback failed: CallbackReverted: adapter 0x5fbdb2315678afecb367f032d93f642f64180aa3 reverted with MalformedCalldata()';

describe('portal: every rail (browser)', { skip, timeout: 240_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let m: Creds;
  let pw: string;
  let paid: string;
  let disputed: string;
  let delegate: string;

  before(async () => {
    [s, browser] = await Promise.all([startCheckoutServer('pglite'), launchBrowser()]);
    m = await setupCardMerchant(s);
    pw = await addPortalUser(s, m.merchantId, 'owner@rails.example');
    const card = async (number: string) => {
      const { checkout_id } = await createCardSession(s, m);
      const id = (await startCard(s, checkout_id)).body.order_id as string;
      assert.equal((await payCard(s, checkout_id, number)).status, 200);
      return id;
    };
    paid = await card(CARD.success);
    disputed = await card(CARD.disputed);
    for (let i = 0; i < 2; i++) assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() })).status, 402);
    // Fixture: a DELEGATE order as the settlement worker leaves a reverted callback (the real path,
    // on anvil, is integration/delegate-settlement.test.ts); this test checks how the page shows it.
    delegate = (await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() })).body.order_id;
    await s.db.query(`UPDATE orders SET flow = 'ERC20_3009', status = 'FAILED', callback_status = 'failed', failure_reason = $2, settlement_tx_hash = $3, refund_tx_hash = $4 WHERE id = $1`, [delegate, FAILURE, `0x${'5e'.repeat(32)}`, `0x${'4f'.repeat(32)}`]);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  async function signIn(page: Page) {
    await page.goto(`${s.url}/portal`);
    await page.getByLabel('Email').fill('owner@rails.example');
    await page.getByLabel('Password').fill(pw);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }

  async function clean(page: Page, watch: Awaited<ReturnType<typeof watchPage>>, what: string) {
    assert.deepEqual(await axeSerious(page), [], `axe on ${what}`);
    assert.deepEqual(await watch.cspViolations(page), [], `CSP on ${what}`);
  }

  test('1280 px: overview chart with axes; the list fits; card and DELEGATE orders as what they are', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const watch = await watchPage(context);
    const page = await context.newPage();
    await signIn(page);
    // two charts: orders per day, and the paid EUR volume per day; each with value and date ticks
    assert.equal(await page.locator('svg.chart').count(), 2);
    const ticks = await page.locator('svg.chart').first().locator('text.tick').allTextContents();
    const today = new Date();
    const label = `${['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][today.getUTCMonth()]} ${today.getUTCDate()}`;
    assert.ok(ticks.includes('0') && ticks.includes(label), `axis labels: ${ticks.join(' | ')}`);
    const eur = await page.locator('svg.chart').nth(1).getAttribute('aria-label');
    assert.match(eur!, /Paid volume in EUR .* 9\.5 EUR in total/);
    assert.match((await page.getByRole('table', { name: 'Paid volume by currency or token' }).textContent()) ?? '', /EUR9\.501/);
    await clean(page, watch, 'overview');
    await screenshot(page, 'portal-rails-overview-1280');

    await page.getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { name: 'Orders', exact: true, level: 1 }).waitFor();
    const row = page.getByRole('row').filter({ hasText: paid });
    assert.match((await row.textContent())!, /Paid.*9\.50 EUR.*Card · TEST.*tpi_/);
    assert.equal(await row.locator('.badge').getAttribute('title'), 'INVOICED', 'the enum on hover');
    assert.match((await page.getByRole('row').filter({ hasText: disputed }).textContent())!, /Paid, confirming/);
    assert.match((await page.getByRole('row').filter({ hasText: delegate }).textContent())!, /Failed.*ERC20_3009 · chain \d+ · callback failed/);
    await screenshot(page, 'portal-rails-orders-1280');
    const wrap = await page.locator('.table-wrap').evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(wrap <= 0, `the orders table fits 1280 px (${wrap} px clipped)`);
    await clean(page, watch, 'orders');

    await page.getByRole('link', { name: paid }).click();
    await page.getByRole('heading', { name: `Order ${paid}` }).waitFor();
    const facts = (await page.locator('.facts').textContent())!;
    for (const want of ['Card', 'Processor', 'TEST', 'Processor reference', 'Visa •••• 4242', '9.50 EUR', 'Disputenone']) assert.ok(facts.includes(want), `${want} in ${facts}`);
    for (const never of ['Chain', 'Pay to', 'Payer', '0x0000']) assert.ok(!facts.includes(never), `no ${never} on a card order`);
    assert.equal(await page.locator('#refunds[data-slot="refunds"]').count(), 1, 'the refunds slot');
    await clean(page, watch, 'card order');
    await screenshot(page, 'portal-rails-card-1280');

    await page.goto(`${s.url}/portal/#/orders/${disputed}`);
    await page.getByRole('heading', { name: `Order ${disputed}` }).waitFor();
    const held = (await page.locator('.facts').textContent())!;
    assert.ok(held.includes('Paid, on hold') && held.includes('Disputeopened') && held.includes('Held becausedispute'), held);

    await page.goto(`${s.url}/portal/#/orders/${delegate}`);
    await page.getByRole('heading', { name: `Order ${delegate}` }).waitFor();
    const d = (await page.locator('.facts').textContent())!;
    for (const want of ['Crypto, DELEGATE', 'Callbackfailed', FAILURE, `0x${'5e'.repeat(32)}`]) assert.ok(d.includes(want), `${want} in ${d}`);
    assert.match((await page.locator('[data-refund-state]').textContent())!, new RegExp(`Refunded to the payer: 0x${'4f'.repeat(32)}`));
    await clean(page, watch, 'DELEGATE order');
    await screenshot(page, 'portal-rails-delegate-1280');
    await context.close();
  });

  test('375 px: the orders list reads as cards, no sideways scroll; the card order detail', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    const watch = await watchPage(context);
    const page = await context.newPage();
    await signIn(page);
    await clean(page, watch, 'overview at 375 px');
    await screenshot(page, 'portal-rails-overview-375');
    await page.getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { name: 'Orders', exact: true, level: 1 }).waitFor();
    assert.equal(
      await page
        .locator('.table-wrap tr')
        .nth(1)
        .evaluate((el) => getComputedStyle(el).display),
      'block',
      'rows are cards',
    );
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scroll at 375 px (${overflow})`);
    const clipped = await page.locator('.table-wrap').evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(clipped <= 0, `nothing clipped in the list (${clipped})`);
    await clean(page, watch, 'orders at 375 px');
    await screenshot(page, 'portal-rails-orders-375');
    await page.goto(`${s.url}/portal/#/orders/${paid}`);
    await page.getByRole('heading', { name: `Order ${paid}` }).waitFor();
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0);
    await clean(page, watch, 'card order at 375 px');
    await screenshot(page, 'portal-rails-card-375');
    await context.close();
  });

  test('products and payment links: create, edit, share with a QR, sessions with the payer reference, deactivate; machine payments; a new API key listed at once (1280 and 375 px)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const watch = await watchPage(context);
    const page = await context.newPage();
    await signIn(page);
    await page.getByRole('link', { name: 'Payment links' }).click();
    await page.getByRole('heading', { level: 1, name: 'Products and payment links' }).waitFor();
    await clean(page, watch, 'empty products and links');
    await page.getByLabel('Product name').fill('Espresso beans');
    await page.getByLabel('Crypto price').fill('12.50');
    await page.getByLabel('Card currency').fill('EUR');
    await page.getByLabel('Card amount').fill('11.90');
    await page.getByLabel('Inventory').fill('20');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('status').filter({ hasText: 'Created product Espresso beans' }).waitFor();
    const row = page.getByRole('table', { name: 'Products' }).getByRole('row').filter({ hasText: 'Espresso beans' });
    assert.match((await row.textContent())!, /12\.50 \(crypto\) · 11\.90 EUR \(card\).*20.*active/);
    // edit: the form fills with the product, Save changes it
    await row.getByRole('button', { name: 'Edit' }).click();
    assert.equal(await page.getByLabel('Crypto price').inputValue(), '12.50');
    await page.getByLabel('Crypto price').fill('13');
    await page.getByRole('button', { name: 'Save Espresso beans' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved product Espresso beans' }).waitFor();
    const {
      rows: [prod],
    } = await s.db.query<{ id: string; price: string }>('SELECT id, price FROM quickpay_products WHERE merchant_id = $1', [m.merchantId]);
    assert.equal(prod!.price, '13');

    await page.getByLabel('Sells').selectOption({ label: 'Espresso beans' });
    await page.getByLabel('Rails').fill('crypto,card');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Created payment link pl_/ })
      .waitFor();
    const link = (await s.signed(m, 'GET', '/api/v1/payment-links')).body.data[0];
    await page.locator(`[data-share="${link.link_id}"]`).click();
    const qr = page.getByRole('img', { name: `QR code of ${link.url}` });
    await qr.waitFor();
    assert.equal(await page.locator('.share code').textContent(), link.url);
    await clean(page, watch, 'products and links, shared');
    await screenshot(page, 'portal-rails-links-1280');

    // a payer opens a session with a reference; the link's sessions page shows it
    const open = await s.request('POST', `/quickpay/v1/links/${link.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: `0x${'12'.repeat(20)}`, memo: 'Table 7' } });
    assert.equal(open.status, 200, open.text);
    await page.getByRole('link', { name: link.link_id }).click();
    await page.getByRole('heading', { name: `Sessions of ${link.link_id}` }).waitFor();
    assert.match((await page.getByRole('row').filter({ hasText: open.body.session_id }).textContent())!, /Table 7/);
    await clean(page, watch, 'link sessions');
    await screenshot(page, 'portal-rails-sessions-1280');
    await page.getByRole('link', { name: 'All products and links' }).click();
    await page.getByRole('table', { name: 'Payment links' }).getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('status').filter({ hasText: 'deactivated: no new sessions' }).waitFor();
    assert.equal((await s.signed(m, 'GET', `/api/v1/payment-links/${link.link_id}`)).body.active, false);

    await page.getByRole('link', { name: 'Machine payments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Machine payments' }).waitFor();
    await page.getByText('No x402 settlements yet.').waitFor();
    await clean(page, watch, 'machine payments');

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', exact: true, level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Create API key' }).click();
    const made = (await page.locator('.out p').first().textContent())!.replace('API key ', '');
    await page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: made }).waitFor();
    await clean(page, watch, 'api keys, new key listed');
    await context.close();

    const narrow = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    const watch2 = await watchPage(narrow);
    const phone = await narrow.newPage();
    await signIn(phone);
    await phone.goto(`${s.url}/portal/#/links`);
    await phone.getByRole('heading', { level: 1, name: 'Products and payment links' }).waitFor();
    await phone.locator(`[data-share="${link.link_id}"]`).click();
    await phone.getByRole('img', { name: `QR code of ${link.url}` }).waitFor();
    assert.ok((await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0, 'no sideways scroll at 375 px');
    await clean(phone, watch2, 'products and links at 375 px');
    await screenshot(phone, 'portal-rails-links-375');
    await phone.goto(`${s.url}/portal/#/machine`);
    await phone.getByRole('heading', { level: 1, name: 'Machine payments' }).waitFor();
    await clean(phone, watch2, 'machine payments at 375 px');
    await narrow.close();
  });
});
