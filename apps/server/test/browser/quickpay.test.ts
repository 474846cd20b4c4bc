// The hosted quick-pay link page in a real browser (Debian chromium via playwright-core) against a
// real Tollgate, anvil chain and webhook receiver: a fixed-price link paid with an injected wallet
// (session PAYMENT_CONFIRMED, order INVOICED, quickpay.checkout.completed once), an any-amount link
// with min/max enforced and paid by QR from another wallet on a 375-px phone, the share block (URL
// and QR of the link), a sold-out link, reload resuming the attempt, axe-core and CSP checks.
// Screenshots go to test-artifacts/checkout/qp-*.png.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { mine, transferToken } from '@tollgate/devchain';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { cardsOf } from '../../src/rails/card/index.ts';
import { tickedAtHead } from '../integration/watcher-fixtures.ts';
import { assertAxeClean, browserUnavailable, installWallet, pageRequests, screenshot, watchPage } from './browser.ts';
import { DESKTOP, hostedPageSuite, MOBILE } from './fixtures.ts';
import { CHAIN_NAME, EXPLORER_URL } from './stack.ts';

const skip = browserUnavailable();
const IMAGE_URL = 'https://logo.acme-coffee.test/beans.svg';

describe('hosted quick-pay link page (browser)', { skip, timeout: 240_000 }, () => {
  const t = hostedPageSuite({ images: [IMAGE_URL] });
  const { newContext } = t;

  async function createLink(body: Record<string, unknown>): Promise<{ link_id: string; url: string }> {
    const r = await t.stack.server.signed(t.stack.creds, 'POST', '/api/v1/payment-links', { body });
    assert.equal(r.status, 200, r.text);
    return r.body;
  }
  async function createProduct(body: Record<string, unknown>): Promise<string> {
    const r = await t.stack.server.signed(t.stack.creds, 'POST', '/api/v1/products', { body });
    assert.equal(r.status, 200, r.text);
    return r.body.product_id;
  }

  async function mineUntilConfirmed(page: Page) {
    const deadline = Date.now() + 60_000;
    while (!(await page.locator('[data-screen="completed"]').count())) {
      if (Date.now() > deadline) throw new Error(`not confirmed; live region: ${await page.locator('[role="status"]').textContent()}`);
      await mine(t.stack.dev.rpcUrl, 1);
      await new Promise((r) => setTimeout(r, 400));
    }
  }

  /** The receipt's rows (label → value) on the completion screen. */
  async function receiptOf(page: Page): Promise<Record<string, string | undefined>> {
    await page.locator('#receipt-h').waitFor();
    return Object.fromEntries(await page.locator('.receipt dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent!, dt.nextElementSibling!.firstChild!.textContent!])));
  }

  /** One run of the card rail's workers (expiry sweep, processor reconcile), as their loops would. */
  const cardSweeps = async () => {
    const cards = cardsOf(t.stack.server.tg.deps);
    await cards.expireDue();
    await cards.reconcile();
  };

  const completedEvents = (sessionId: string) => t.stack.hooks.hits.filter((h) => h.headers['x-webhook-event'] === 'quickpay.checkout.completed' && JSON.parse(h.body).payload?.session_id === sessionId);

  test('fixed-price link paid with a wallet: PAYMENT_CONFIRMED, then order INVOICED and quickpay.checkout.completed once', async () => {
    const productId = await createProduct({ name: 'House blend, 250 g', description: 'Roasted this week', image_url: IMAGE_URL, price: '9.75' });
    const link = await createLink({ product_id: productId });
    assert.equal(link.url, `${t.stack.server.url}/quickpay/pay/${link.link_id}`);
    const context = await newContext(DESKTOP);
    const watch = await watchPage(context);
    const wallet = await installWallet(context, t.stack.dev, t.stack.dev.payers[4]!.address);
    const page = await context.newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).waitFor();
    assert.equal(await page.locator('h1').textContent(), 'Acme Coffee');
    assert.equal(await page.locator('#link-h').textContent(), 'House blend, 250 g');
    assert.equal(await page.locator('#price').textContent(), '9.75 USDC');
    assert.ok(await page.locator('img.product-image').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'product image loaded');
    // The product's name in the summary, on every screen (checked again on the ones below).
    assert.equal(await page.locator('#product-name').textContent(), 'House blend, 250 g');
    await page.getByRole('radio', { name: /^USDT on/ }).check();
    assert.equal(await page.locator('#price').textContent(), '9.75 USDT');
    await page.getByRole('radio', { name: /^USDC on/ }).check();
    // Share block: the link's URL and a QR code of the link itself.
    await page.getByText('Share this payment link').click();
    assert.equal(await page.locator('#share-url').textContent(), link.url);
    assert.ok((await page.locator('.share svg.qr path').getAttribute('d'))!.length > 500, 'the share QR has modules');
    assert.equal(await page.locator('.share svg.qr').getAttribute('aria-label'), `QR code of this payment link: ${link.url}`);
    await page.getByRole('button', { name: 'Copy link' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link.url);
    await screenshot(page, 'qp-01-link-desktop');
    await assertAxeClean(page, 'link');

    await page.locator('#memo').fill('gift wrap');
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();
    await page.locator('[data-screen="pay"] h2', { hasText: 'Payment sent' }).waitFor();
    assert.equal(await page.locator('#product-name').textContent(), 'House blend, 250 g');
    assert.equal(await page.locator('svg.qr').count(), 0, 'paid with a wallet: no QR code, not even the share one');
    assert.equal(wallet.sent.length, 1);
    assert.equal(wallet.sent[0]!.data, `0xa9059cbb${MERCHANT_WALLET.slice(2).padStart(64, '0')}${(9_750_000).toString(16).padStart(64, '0')}`);
    const sessionId = new URL(page.url()).hash.slice(1);
    assert.match(sessionId, /^qps_/);
    await screenshot(page, 'qp-02-sent-desktop');
    // A reload resumes the attempt (fragment): no second payment offered.
    // (With one confirmation the payment may already be confirmed: then the page says so.)
    await page.reload();
    await page.locator('[data-screen="pay"] h2:has-text("Payment sent"), [data-screen="completed"]').first().waitFor();
    assert.equal(await page.getByRole('button', { name: /^Send / }).count(), 0);
    assert.equal(await page.locator('[data-screen="link"]').count(), 0, 'the link form is not offered again');

    await mineUntilConfirmed(page);
    const st = await t.stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`);
    assert.equal(st.body.status, 'PAYMENT_CONFIRMED');
    await page.locator('#receipt-h').waitFor();
    assert.equal(await page.locator('#product-name').textContent(), 'House blend, 250 g');
    const receipt = await receiptOf(page);
    // After the reload above (maybe already settled: status only) the tab still knows the amount,
    // token and reference it opened the session with.
    assert.deepEqual(
      [receipt['Paid to'], receipt.For, receipt.Amount, receipt['Paid with'], receipt['Your reference'], receipt['Order reference'], receipt.Transaction],
      ['Acme Coffee', 'House blend, 250 g', '9.75 USDC', `USDC on ${CHAIN_NAME}`, 'gift wrap', st.body.order_id, wallet.sent[0]!.hash],
    );
    await screenshot(page, 'qp-03-confirmed-desktop');
    await assertAxeClean(page, 'confirmed');
    // The order reaches INVOICED (finality) and the completion webhook arrives exactly once.
    const deadline = Date.now() + 30_000;
    while (completedEvents(sessionId).length === 0) {
      if (Date.now() > deadline) throw new Error('no quickpay.checkout.completed webhook');
      await mine(t.stack.dev.rpcUrl, 1);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Blocks past finality and a whole watcher tick at the head after them (anything to emit again,
    // it has seen), then every delivery answered: what the receiver holds is all there is.
    await mine(t.stack.dev.rpcUrl, 3);
    await tickedAtHead(t.stack.server.db, t.stack.dev);
    await t.stack.webhooksDelivered();
    const events = completedEvents(sessionId);
    assert.equal(events.length, 1, 'completed once');
    const payload = JSON.parse(events[0]!.body).payload;
    assert.deepEqual([payload.order_status, payload.memo, payload.amount_paid, payload.line_items[0].name], ['INVOICED', 'gift wrap', '9.75', 'House blend, 250 g']);
    assert.equal((await t.stack.server.signed(t.stack.creds, 'GET', `/api/v1/orders/${payload.order_id}`)).body.status, 'INVOICED');
    assert.deepEqual(await watch.cspViolations(page).catch(() => []), []);
    assert.deepEqual(watch.notFound, [], 'no 404 while paying');
    assert.ok(
      watch.requests.every((u) => u.startsWith(t.stack.server.url) || u.startsWith('https://logo.acme-coffee.test/')),
      `only its own origin: ${watch.requests.filter((u) => !u.startsWith(t.stack.server.url)).join(', ')}`,
    );
  });

  test('any-amount link on a 375-px phone: min/max enforced, memo, paid by QR from another wallet', async () => {
    const link = await createLink({ min_amount: '1', max_amount: '20', options: `${t.stack.dev.chainId}:USDC` });
    const context = await newContext(MOBILE, true);
    const page = await context.newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    assert.equal(await page.locator('#link-h').textContent(), 'Pay Acme Coffee');
    assert.equal(await page.locator('#price').textContent(), 'Any amount from 1 to 20 USDC');
    const payer = t.stack.dev.payers[5]!;
    await page.locator('#payer').fill(payer.address);
    for (const bad of ['25', '0.5', '1.2345678', 'abc']) {
      await page.locator('#amount').fill(bad);
      await page.getByRole('button', { name: 'Show payment QR code' }).click();
      await page.locator('#amount-err').waitFor();
      assert.equal(await page.locator('#amount').getAttribute('aria-invalid'), 'true', bad);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'amount', 'focus back on the amount');
    }
    assert.equal(await page.locator('#amount-err').textContent(), 'Enter an amount such as 12.50 (at most 6 decimals).');
    await screenshot(page, 'qp-04-amount-error-mobile');
    // The server enforces the range too (the page's check is only an early explanation).
    const r = await t.stack.server.request('POST', `/quickpay/v1/links/${link.link_id}/sessions`, { body: { chain_id: t.stack.dev.chainId, token_symbol: 'USDC', from_address: payer.address, amount: '20.01' } });
    assert.deepEqual([r.status, r.body.code], [400, 'amount_out_of_range']);
    await page.locator('#amount').fill('12.34');
    await page.locator('#memo').fill('Invoice 2291');
    await page.getByRole('button', { name: 'Show payment QR code' }).click();
    await page.locator('[data-screen="pay"] svg.qr').waitFor();
    assert.equal(await page.locator('svg.qr').count(), 1, 'one QR code on the pay screen: the one to pay with (the share QR is on the link screen only)');
    assert.equal(await page.locator('.share').count(), 0);
    assert.equal(await page.locator('.total').textContent(), 'Total 12.34 USDC');
    assert.equal(await page.locator('#pay-h').textContent(), `Pay 12.34 USDC on ${CHAIN_NAME}`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll');
    await screenshot(page, 'qp-05-qr-mobile');
    await assertAxeClean(page, 'pay (QR, mobile)');
    await transferToken({ rpcUrl: t.stack.dev.rpcUrl, chainId: t.stack.dev.chainId, privateKey: payer.privateKey, token: t.stack.usdc.address, to: MERCHANT_WALLET, amount: 12_340_000n });
    await mineUntilConfirmed(page);
    await page.locator('#receipt-h').waitFor();
    const st = (await t.stack.server.request('GET', `/quickpay/v1/sessions/${new URL(page.url()).hash.slice(1)}`)).body;
    const receipt = await receiptOf(page);
    assert.deepEqual(
      { ...receipt, Date: undefined },
      {
        'Paid to': 'Acme Coffee',
        Amount: '12.34 USDC',
        'Paid with': `USDC on ${CHAIN_NAME}`,
        'Order reference': st.order_id,
        'Your reference': 'Invoice 2291',
        Date: undefined,
        Transaction: st.tx_hash,
      },
    );
    assert.equal(await page.locator('#explorer-done').getAttribute('href'), `${EXPLORER_URL}/tx/${st.tx_hash}`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll on the receipt');
    await screenshot(page, 'qp-06-confirmed-mobile');
    await assertAxeClean(page, 'confirmed (mobile, receipt)');
    // Downloadable: a text file with the same rows.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-receipt').click()]);
    assert.equal(download.suggestedFilename(), `receipt-${st.order_id}.txt`);
    const text = await readFile((await download.path())!, 'utf8');
    for (const v of ['Payment receipt', 'Acme Coffee', '12.34 USDC', st.order_id, 'Invoice 2291', st.tx_hash, `${EXPLORER_URL}/tx/${st.tx_hash}`]) assert.ok(text.includes(v), `${v} in the downloaded receipt:\n${text}`);
    // Printable: the print stylesheet keeps the merchant and the receipt, drops what is clicked.
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('.receipt').isVisible(), true);
    for (const hidden of ['.receipt-actions', '.foot', '.summary']) assert.equal(await page.locator(hidden).isVisible(), false, `${hidden} not printed`);
    await screenshot(page, 'qp-06b-receipt-print-mobile');
    await page.emulateMedia({ media: 'screen' });
    const rec = (await t.stack.server.signed(t.stack.creds, 'GET', `/api/v1/payment-links/${link.link_id}/sessions`)).body.data[0];
    assert.deepEqual([rec.amount, rec.memo, rec.status], ['12.34', 'Invoice 2291', 'PAYMENT_CONFIRMED']);
  });

  test('the link page at 375 px before paying; a link at its count limit shows it takes no payment', async () => {
    const productId = await createProduct({ name: 'Workshop seat', description: 'Saturday 10:00, 2 hours', price: '40' });
    const link = await createLink({ product_id: productId, max_payments: 1 });
    const context = await newContext(MOBILE, true);
    const page = await context.newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll');
    await screenshot(page, 'qp-07-link-mobile');
    await assertAxeClean(page, 'link (mobile)');
    const taken = await t.stack.server.request('POST', `/quickpay/v1/links/${link.link_id}/sessions`, { body: { chain_id: t.stack.dev.chainId, token_symbol: 'USDC', from_address: t.stack.dev.payers[6]!.address } });
    assert.equal(taken.status, 200, taken.text);
    await page.reload();
    await page.locator('[data-screen="unavailable"]').waitFor();
    assert.equal(await page.locator('#msg-h').textContent(), 'This link takes no more payments');
    await screenshot(page, 'qp-08-sold-out-mobile');
    await page.goto(`${t.stack.server.url}/quickpay/pay/pl_doesnotexist`);
    await page.locator('[data-screen="not-found"]').waitFor();
  });

  test('an expired session: the page resumes it from the fragment and shows it expired (status only); the link itself still takes payments', async () => {
    const productId = await createProduct({ name: 'Day pass', price: '5' });
    const link = await createLink({ product_id: productId });
    const body = { chain_id: t.stack.dev.chainId, token_symbol: 'USDC', from_address: t.stack.dev.payers[7]!.address, idempotency_key: 'exp-browser' };
    const created = await t.stack.server.request('POST', `/quickpay/v1/links/${link.link_id}/sessions`, { body });
    assert.equal(created.status, 200, created.text);
    const context = await newContext(DESKTOP);
    const page = await context.newPage();
    t.stack.clock.advance(t.stack.server.tg.deps.config.orderTtlSeconds + 1);
    try {
      const again = await t.stack.server.request('POST', `/quickpay/v1/links/${link.link_id}/sessions`, { body });
      assert.deepEqual(Object.keys(again.body).sort(), ['order_id', 'order_status', 'session_id', 'status'], 'status only');
      assert.equal(again.body.status, 'EXPIRED');
      await page.goto(`${link.url}#${created.body.session_id}`);
      await page.locator('[data-screen="expired"]').waitFor();
    } finally {
      t.stack.clock.reset();
    }
    assert.equal(await page.locator('[data-screen] h2').textContent(), 'This payment has expired');
    assert.equal(await page.getByRole('button', { name: /Pay with/ }).count(), 0);
    await screenshot(page, 'qp-09-expired');
    await assertAxeClean(page, 'expired');
    await page.getByRole('button', { name: 'Start again' }).click();
    await page.locator('[data-screen="link"]').waitFor();
  });

  test('card quick-pay through the TEST processor: a declined card, then the success card; session COMPLETED on INVOICED, quickpay.checkout.completed once', async () => {
    const on = await t.stack.server.admin('POST', `/admin/v1/merchants/${t.stack.creds.merchantId}/card-rail`, { enabled: true });
    assert.equal(on.status, 200, on.text);
    const productId = await createProduct({ name: 'Mug', price: '12', fiat_currency: 'EUR', fiat_amount: '11.00' });
    // The merchant offers card first: the link's payment_rails order is the page's order.
    const link = await createLink({ product_id: productId, payment_rails: 'card,crypto' });
    assert.deepEqual((await t.stack.server.request('GET', `/quickpay/v1/links/${link.link_id}`)).body.payment_rails, ['card', 'crypto']);
    const context = await newContext(DESKTOP);
    const watch = await watchPage(context);
    const page = await context.newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    const order = () => page.locator('[data-method="card"], [data-rail="crypto"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-method') ?? e.getAttribute('data-rail')));
    assert.deepEqual(await order(), ['card', 'crypto']);
    await page.locator('#memo').fill('order 77');
    await screenshot(page, 'qp-10-card-choice');
    await page.getByRole('button', { name: 'Pay 11.00 EUR by card' }).click();
    await page.locator('[data-screen="card"]').waitFor();
    const sessionId = new URL(page.url()).hash.slice(1);
    assert.match(sessionId, /^qps_/);
    await assertAxeClean(page, 'card form');
    const fill = async (number: string) => {
      await page.getByLabel('Card number').fill(number);
      await page.getByLabel('Expiry (MM/YY)').fill('12/34');
      await page.getByLabel('CVC').fill('123');
      await page.getByRole('button', { name: 'Pay 11.00 EUR' }).click();
    };
    await fill('4000 0000 0000 0002');
    await page.getByText(/Card ending 0002 was declined/).waitFor();
    await new Promise((r) => setTimeout(r, 300)); // the live region would have spoken by now
    assert.equal(await page.getByText(/declined/i).count(), 1, "the decline is said once (the form's alert), not again in the live region");
    assert.equal(await page.locator('#product-name').textContent(), 'Mug');
    await screenshot(page, 'qp-10b-card-declined');
    await assertAxeClean(page, 'card declined');
    assert.equal((await t.stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body.status, 'OPEN');
    await fill('4242 4242 4242 4242');
    await page.locator('[data-screen="completed"]').waitFor();
    await page.getByText('Tollgate has confirmed your card payment.').waitFor();
    const receipt = await receiptOf(page);
    assert.deepEqual([receipt.For, receipt.Amount, receipt['Paid with'], receipt['Your reference'], receipt.Transaction], ['Mug', '11.00 EUR', 'Card ending 4242', 'order 77', undefined]);
    assert.match(receipt['Order reference']!, /^ord_/);
    await screenshot(page, 'qp-11-card-completed');
    await assertAxeClean(page, 'card completed');
    const st = await t.stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`);
    assert.deepEqual([st.body.status, st.body.order_status], ['COMPLETED', 'INVOICED']);
    const deadline = Date.now() + 30_000;
    while (completedEvents(sessionId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await cardSweeps();
    await t.stack.webhooksDelivered();
    const hits = completedEvents(sessionId);
    assert.equal(hits.length, 1, 'quickpay.checkout.completed exactly once');
    const payload = JSON.parse(hits[0]!.body).payload;
    assert.deepEqual([payload.rail, payload.memo, payload.order_status], ['card', 'order 77', 'INVOICED']);
    // the card number never appears in a URL the page loaded
    assert.ok(
      watch.requests.every((u: string) => !u.includes('4242')),
      'no card number in a URL',
    );
  });

  test('card quick-pay with the delayed test card: processing past the window stays "processing" (never expired), a reload resumes it, the processor\'s success completes it', async () => {
    const productId = await createProduct({ name: 'Slow mug', price: '12', fiat_currency: 'EUR', fiat_amount: '11.00' });
    const link = await createLink({ product_id: productId, payment_rails: 'crypto,card' });
    const context = await newContext(DESKTOP);
    const page = await context.newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    await page.getByRole('button', { name: 'Pay 11.00 EUR by card' }).click();
    await page.locator('[data-screen="card"]').waitFor();
    const sessionId = new URL(page.url()).hash.slice(1);
    await page.getByLabel('Card number').fill('4000 0000 0000 3253');
    await page.getByLabel('Expiry (MM/YY)').fill('12/34');
    await page.getByLabel('CVC').fill('123');
    await page.getByRole('button', { name: 'Pay 11.00 EUR' }).click();
    await page.locator('[data-screen="card-processing"]').waitFor();
    const st0 = (await t.stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body;
    assert.deepEqual([st0.status, st0.terms.payment_state], ['OPEN', 'processing']);
    // The window ends while the processor still has the payment; the sweepers run on this clock.
    t.stack.clock.advance(t.stack.server.tg.deps.config.orderTtlSeconds + 60);
    try {
      // The sweepers' own runs on this clock (not a race with their 1-s loops), then two polls of the
      // page sent after them, the first answered and handled: the page still does not say expired.
      await t.stack.server.tg.deps.orders.expireDue();
      await cardSweeps();
      await pageRequests(page, `/quickpay/v1/sessions/${sessionId}`).issued(2);
      assert.equal(await page.locator('[data-screen="expired"]').count(), 0, 'not shown expired');
      assert.equal((await t.stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body.status, 'OPEN');
      await page.reload();
      await page.locator('[data-screen="card-processing"]').waitFor();
      assert.equal(await page.getByLabel('Card number').count(), 0, 'no card form: the payment is under way');
      await page.getByText('even past the time limit').waitFor();
      await screenshot(page, 'qp-12-card-processing-past-window');
      await assertAxeClean(page, 'card processing');
      const orderId: string = st0.order_id;
      const done = await t.stack.server.admin('POST', `/admin/v1/orders/${orderId}/card/simulate`, { scenario: 'succeeded' });
      assert.equal(done.status, 200, done.text);
      await page.locator('[data-screen="completed"]').waitFor({ timeout: 15_000 });
      const st = (await t.stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body;
      assert.deepEqual([st.status, st.order_status], ['COMPLETED', 'INVOICED']);
      const deadline = Date.now() + 30_000;
      while (completedEvents(sessionId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      await cardSweeps();
      await t.stack.webhooksDelivered();
      assert.equal(completedEvents(sessionId).length, 1, 'quickpay.checkout.completed exactly once');
    } finally {
      t.stack.clock.reset();
    }
  });
});
