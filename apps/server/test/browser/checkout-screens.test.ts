// The hosted checkout page in a real browser (Debian chromium via playwright-core) against a real
// Tollgate and merchant site: its layouts (QR terms at 1280 px, no logo, 320 px) and the screens
// that end or refuse a payment (not found, incomplete link, failed, cancelled, rate-limited,
// unreachable, expired, too little time left), a browser clock far off the server's, and axe-core
// checks on each. Paying end to end is checkout.test.ts's. Screenshots go to test-artifacts/checkout/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { assertAxeClean, browserUnavailable, screenshot, watchPage } from './browser.ts';
import { DESKTOP, hostedPageSuite } from './fixtures.ts';
import { CHAIN_NAME } from './stack.ts';

const skip = browserUnavailable();

describe('hosted checkout page: layouts and end screens (browser)', { skip, timeout: 240_000 }, () => {
  const t = hostedPageSuite();
  const { newContext } = t;

  test('QR terms at 1280 px: heading, copy buttons, QR and no horizontal overflow', async () => {
    const s = await t.stack.createSession();
    const context = await newContext(DESKTOP);
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.locator('#payer').fill(t.stack.dev.payers[2]!.address);
    await page.getByRole('button', { name: 'Show payment QR code' }).click();
    await page.locator('svg.qr').waitFor();
    assert.equal(await page.locator('#pay-h').textContent(), `Pay 12.50 USDC on ${CHAIN_NAME}`);
    assert.equal(await page.getByRole('button', { name: 'Copy amount' }).getAttribute('data-copy'), '12.50');
    assert.equal(await page.getByRole('button', { name: 'Copy address' }).getAttribute('data-copy'), MERCHANT_WALLET);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 1280));
    await screenshot(page, '07b-qr-desktop');
    await assertAxeClean(page, 'pay (QR, desktop)');
  });

  test('a merchant without a logo: no image and no empty box in the header', async () => {
    const s = await t.stack.createSession();
    const context = await newContext(DESKTOP);
    await context.route(/\/checkout\/v1\/sessions\/[^/]+$/, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      delete body.merchant.logo_url;
      await route.fulfill({ response: res, json: body });
    });
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    assert.equal(await page.locator('header img').count(), 0);
    assert.equal(await page.locator('h1').textContent(), 'Acme Coffee');
  });

  test('320 px: still one column without horizontal scroll', async () => {
    const s = await t.stack.createSession();
    const context = await newContext({ width: 320, height: 640 }, true);
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 320), 'no horizontal scroll at 320 px');
    await screenshot(page, '09-choose-320');
  });

  test('not-found and incomplete links', async () => {
    const context = await newContext(DESKTOP);
    const watch = await watchPage(context);
    const page = await context.newPage();
    await page.goto(`${t.stack.server.url}/checkout/pay#cs_doesnotexist00000000000000`);
    await page.locator('[data-screen="not-found"]').waitFor();
    assert.equal(await page.locator('[data-screen] h2').textContent(), 'Checkout not found');
    await screenshot(page, '10-not-found');
    await assertAxeClean(page, 'not found');
    await page.goto(`${t.stack.server.url}/checkout/pay`);
    await page.locator('[data-screen="bad-link"]').waitFor();
    await assertAxeClean(page, 'bad link');
    assert.deepEqual(await watch.cspViolations(page), []);
  });

  test('failed, cancelled, rate-limited and unreachable screens (answers rewritten in the browser)', async () => {
    const s = await t.stack.createSession();
    const context = await newContext(DESKTOP);
    type Mode = 'FAILED' | 'CANCELLED' | '429' | '503';
    let mode = 'FAILED' as Mode;
    await context.route(/\/checkout\/v1\/sessions\/[^/]+$/, async (route) => {
      if (mode === '429') return route.fulfill({ status: 429, headers: { 'retry-after': '7' }, json: { error: 'Too many requests', code: 'rate_limited', request_id: 'req_x' } });
      if (mode === '503') return route.fulfill({ status: 503, json: { error: 'unavailable', code: 'service_unavailable', request_id: 'req_y' } });
      const res = await route.fetch();
      await route.fulfill({ response: res, json: { ...(await res.json()), status: mode } });
    });
    const page = await context.newPage();
    const expect: Record<Mode, [string, string]> = {
      FAILED: ['failed', 'The payment failed'],
      CANCELLED: ['cancelled', 'This checkout was cancelled'],
      '429': ['rate-limited', 'Too many requests'],
      '503': ['unreachable', 'Checkout unavailable'],
    };
    for (const m of ['FAILED', 'CANCELLED', '429', '503'] as const) {
      mode = m;
      await page.goto(s.url);
      await page.reload(); // same URL with a fragment: goto alone would not reload the page
      const [id, title] = expect[m];
      await page.locator(`[data-screen="${id}"]`).waitFor();
      assert.equal(await page.locator('[data-screen] h2').textContent(), title);
      assert.equal(await page.getByRole('button', { name: /Pay with|QR code/ }).count(), 0);
      if (m === '429') assert.match((await page.locator('[data-screen] p').textContent())!, /wait 7 seconds/);
      await assertAxeClean(page, id);
      if (m === 'FAILED' || m === '429') await screenshot(page, `12-${id}`);
    }
  });

  test('expired session: the expired screen, no payment offered', async () => {
    const s = await t.stack.createSession({ expires_in: 300 });
    const context = await newContext(DESKTOP);
    const page = await context.newPage();
    t.stack.clock.advance(301);
    try {
      await page.goto(s.url);
      await page.locator('[data-screen="expired"]').waitFor();
    } finally {
      t.stack.clock.reset();
    }
    assert.equal(await page.locator('[data-screen] h2').textContent(), 'This checkout has expired');
    assert.equal(await page.getByRole('button', { name: /Pay with/ }).count(), 0);
    assert.equal(await page.locator('[role="timer"]').isVisible(), false);
    assert.equal(await page.getByRole('link', { name: 'Return to Acme Coffee' }).getAttribute('href'), `${t.stack.shop.url}/shop/cart`);
    await screenshot(page, '11-expired');
    await assertAxeClean(page, 'expired');
  });

  test('less than a minute left: the page offers no payment (the server would refuse the bind)', async () => {
    const s = await t.stack.createSession({ expires_in: 300 });
    const context = await newContext(DESKTOP);
    // Serve the real session view with 50 s left (the server refuses binds under 60 s).
    await context.route(/\/checkout\/v1\/sessions\/[^/]+$/, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      await route.fulfill({ response: res, json: { ...body, expires_at: Math.floor(Date.now() / 1000) + 50 } });
    });
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="too-late"]').waitFor();
    assert.equal(await page.getByRole('button', { name: /Pay with|QR code/ }).count(), 0);
    await assertAxeClean(page, 'too late');
  });

  test('a browser clock 2 hours fast still counts down from the server time (Date header)', async () => {
    const s = await t.stack.createSession({ expires_in: 600 });
    const context = await newContext(DESKTOP);
    await context.clock.setSystemTime(Date.now() + 2 * 3600_000);
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    assert.match((await page.locator('[role="timer"]').textContent())!, /^Checkout open for: (9|10):\d\d$/);
  });
});
