// The hosted checkout page in a real browser (Debian chromium via playwright-core) against a real
// Tollgate, anvil chain, merchant site and webhook receiver, the two ways to pay end to end: an
// injected wallet, and the QR / EIP-681 path on a 375-px phone by keyboard (paid from another
// wallet), with axe-core checks. The layouts and the screens that end or refuse a payment are
// checkout-screens.test.ts's. Screenshots go to test-artifacts/checkout/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { mine, transferToken } from '@tollgate/devchain';
import { verifyWebhookSignature } from '@tollgate/protocol';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { assertAxeClean, browserUnavailable, holdNavigation, installWallet, screenshot, watchPage } from './browser.ts';
import { DESKTOP, hostedPageSuite, MOBILE } from './fixtures.ts';
import { CHAIN_NAME, EXPLORER_URL } from './stack.ts';

const skip = browserUnavailable();

describe('hosted checkout page (browser)', { skip, timeout: 240_000 }, () => {
  const t = hostedPageSuite();
  const { newContext } = t;

  /** Mines a block at a time until the page shows completion (the watcher invoices at 2 confirmations). */
  async function mineUntilCompleted(page: Page) {
    const deadline = Date.now() + 60_000;
    while (!(await page.locator('[data-screen="completed"]').count())) {
      if (Date.now() > deadline) throw new Error(`not completed; live region: ${await page.locator('[role="status"]').textContent()}`);
      await mine(t.stack.dev.rpcUrl, 1);
      await new Promise((r) => setTimeout(r, 400));
    }
  }

  async function assertWebhook(checkoutId: string, orderId: string) {
    const deadline = Date.now() + 20_000;
    const find = () => t.stack.hooks.hits.find((h) => h.headers['x-webhook-event'] === 'quickpay.checkout.completed' && JSON.parse(h.body).payload?.checkout_id === checkoutId);
    while (!find()) {
      if (Date.now() > deadline) throw new Error(`no quickpay.checkout.completed webhook; received: ${t.stack.hooks.hits.map((h) => h.headers['x-webhook-event']).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const hit = find()!;
    assert.ok(verifyWebhookSignature({ secret: t.stack.webhookSecret, rawBody: hit.body, header: hit.headers['x-webhook-signature'] as string }), 'webhook signature verifies');
    const env = JSON.parse(hit.body);
    assert.equal(env.payload.order_id, orderId);
    assert.equal(env.payload.order_status, 'INVOICED');
  }

  test('pay with an injected wallet: choose USDC, connect, switch chain, pay, complete, back to the merchant', async () => {
    const s = await t.stack.createSession();
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/checkout\/pay#cs_/);
    const payer = t.stack.dev.payers[0]!.address;
    const context = await newContext(DESKTOP);
    const watch = await watchPage(context);
    const wallet = await installWallet(context, t.stack.dev, payer);
    const page = await context.newPage();

    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).waitFor();
    // Merchant, logo (https, served by the test route), line items with exact totals, countdown.
    assert.equal(await page.locator('h1').textContent(), 'Acme Coffee');
    assert.ok(await page.locator('img.logo').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'logo loaded');
    // Line items: name, quantity × unit price and line total, in the selected token.
    const lines = () => page.locator('.items li').evaluateAll((lis) => lis.map((li) => [li.querySelector('.item-name')!.firstChild!.textContent, li.querySelector('.qty')?.textContent, li.querySelector('.item-amount')?.textContent]));
    assert.deepEqual(await lines(), [
      ['Flat white', '2 × 4.50 USDC', '9.00 USDC'],
      ['Almond croissant', '1 × 3.50 USDC', '3.50 USDC'],
    ]);
    assert.equal(await page.locator('.total').textContent(), 'Total 12.50 USDC');
    // Amount, token and network in one line, before any input.
    assert.equal(await page.locator('#choose-h').textContent(), `Pay 12.50 USDC on ${CHAIN_NAME}`);
    assert.equal(await page.locator('.option-text').first().textContent(), `USDC on ${CHAIN_NAME}`);
    // The favicon the page links is served (no 404 in the payer's console).
    const icon = await page.locator('link[rel="icon"]').evaluate((l: HTMLLinkElement) => l.href);
    assert.equal((await page.request.get(icon)).status(), 200);
    // The public view carries the configured network name and explorer.
    const view = await t.stack.server.request('GET', `/checkout/v1/sessions/${s.checkout_id}`);
    assert.deepEqual(
      view.body.payment_options.map((o: { chain_name: string; explorer_url: string }) => [o.chain_name, o.explorer_url]),
      [
        [CHAIN_NAME, EXPLORER_URL],
        [CHAIN_NAME, EXPLORER_URL],
      ],
    );
    // Before a payment starts the timer is the checkout's window, named as such: the order's
    // shorter window after the bind is "Time left to pay" (the number changes with its name).
    assert.match((await page.locator('[role="timer"]').textContent())!, /^Checkout open for: (59|60):\d\d$/);
    assert.equal(await page.locator('#payer').getAttribute('placeholder'), '0x…', 'an EVM-shaped example for an EVM option');
    assert.equal(await page.getByRole('link', { name: 'Cancel and return to Acme Coffee' }).getAttribute('href'), `${t.stack.shop.url}/shop/cart`);
    await screenshot(page, '01-choose-desktop');
    await assertAxeClean(page, 'choose');

    // Two wallets announced themselves (EIP-6963): the payer picks one.
    assert.equal(await page.locator('button.wallet').count(), 2);
    await page.getByRole('radio', { name: /USDT/ }).check();
    assert.equal(await page.locator('.total').textContent(), 'Total 12.50 USDT');
    assert.equal(await page.locator('#choose-h').textContent(), `Pay 12.50 USDT on ${CHAIN_NAME}`);
    assert.deepEqual(
      (await lines()).map((l) => l[2]),
      ['9.00 USDT', '3.50 USDT'],
    );
    await page.getByRole('radio', { name: /USDC/ }).check();
    // The other wallet declines the connection: the page says so and stays usable.
    await page.getByRole('button', { name: 'Pay with Other Wallet' }).click();
    await page.locator('[role="status"]', { hasText: 'You declined the request in your wallet.' }).waitFor();
    assert.equal(await page.locator('[data-screen="choose"]').count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Pay with Test Wallet' }).isEnabled(), true);
    await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();

    await page.locator('[data-screen="pay"] h2', { hasText: 'Payment sent' }).waitFor();
    assert.deepEqual(wallet.calls.map((c) => c.method).slice(0, 4), ['eth_requestAccounts', 'eth_chainId', 'wallet_switchEthereumChain', 'eth_chainId']);
    assert.equal(wallet.sent.length, 1);
    const tx = wallet.sent[0]!;
    assert.equal(tx.to, t.stack.usdc.address);
    assert.equal(tx.data, `0xa9059cbb${MERCHANT_WALLET.slice(2).padStart(64, '0')}${(12_500_000).toString(16).padStart(64, '0')}`);
    assert.match((await page.locator('[role="status"]').textContent())!, /Payment sent|Payment seen|Payment received/);
    // The transaction on the configured block explorer (new tab, no referrer).
    const explorer = page.locator('#explorer');
    assert.equal(await explorer.getAttribute('href'), `${EXPLORER_URL}/tx/${tx.hash}`);
    assert.equal(await explorer.textContent(), 'View the transaction on explorer.tollgate.test');
    assert.equal(await explorer.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await page.getByRole('link', { name: /^Cancel/ }).count(), 0, 'no "cancel" once the transfer is sent');
    await screenshot(page, '02-sent-desktop');
    await assertAxeClean(page, 'pay (sent)');
    // A reload before the transfer is confirmed must not invite a second payment.
    await page.reload();
    await page.locator('[data-screen="pay"] h2', { hasText: 'Payment sent' }).waitFor();
    assert.equal(await page.locator('svg.qr').count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Send / }).count(), 0);
    // Once the watcher has seen the transfer, no countdown and no instruction to send.
    await page.locator('[role="status"]', { hasText: /Payment seen|Payment received/ }).waitFor();
    assert.equal(await page.locator('[role="timer"]').isVisible(), false);
    assert.match((await page.locator('[data-screen="pay"] .note').textContent())!, /^Do not send this payment again\./);

    const orderId = (await t.stack.server.request('GET', `/checkout/v1/sessions/${s.checkout_id}/status`)).body.order_id;
    const releaseReturn = await holdNavigation(page, '/shop/success');
    await mineUntilCompleted(page);
    // The receipt (a chunk loaded on completion): merchant, items, amount, token and network, order, transaction.
    await page.locator('#receipt-h').waitFor();
    assert.match((await page.locator('[data-screen="completed"]').textContent())!, /This page is not a proof of payment/);
    assert.equal(await page.locator('#explorer-done').getAttribute('href'), `${EXPLORER_URL}/tx/${tx.hash}`);
    const receipt = Object.fromEntries(await page.locator('.receipt dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling!.firstChild!.textContent])));
    assert.deepEqual(
      { ...receipt, Date: undefined },
      {
        'Paid to': 'Acme Coffee',
        For: '2 × Flat white, Almond croissant',
        Amount: '12.50 USDC',
        'Paid with': `USDC on ${CHAIN_NAME}`,
        'Order reference': orderId,
        Date: undefined,
        Transaction: tx.hash,
      },
    );
    assert.equal(await page.getByRole('button', { name: 'Print receipt' }).count(), 1);
    assert.equal(await page.locator('#download-receipt').getAttribute('download'), `receipt-${orderId}.txt`);
    await screenshot(page, '03-completed-desktop');
    await assertAxeClean(page, 'completed');

    releaseReturn();
    await page.waitForURL((u) => u.pathname === '/shop/success', { timeout: 15_000 });
    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('order'), '42');
    assert.equal(landed.searchParams.get('checkout_id'), s.checkout_id);
    await screenshot(page, '04-merchant-success');

    // The merchant verifies server-side: session COMPLETED, order INVOICED, webhook delivered.
    const st = await t.stack.server.request('GET', `/checkout/v1/sessions/${s.checkout_id}/status`);
    assert.equal(st.body.status, 'COMPLETED');
    assert.equal(st.body.order_status, 'INVOICED');
    assert.equal(st.body.tx_hash, tx.hash.toLowerCase());
    const order = await t.stack.server.signed(t.stack.creds, 'GET', `/api/v1/orders/${st.body.order_id}`);
    assert.equal(order.status, 200);
    assert.equal(order.body.status, 'INVOICED');
    assert.equal(order.body.from_address, payer.toLowerCase());
    assert.equal(order.body.checkout_id, s.checkout_id);
    await assertWebhook(s.checkout_id, st.body.order_id);

    // No external request, nothing blocked by the CSP (checked before leaving the page above).
    const tollgate = new URL(t.stack.server.url).origin;
    assert.deepEqual(watch.notFound, [], 'no 404 (icon, assets) while paying');
    const foreign = watch.requests.filter((u) => ![tollgate, t.stack.shop.url, new URL(t.stack.logoUrl).origin].includes(new URL(u).origin));
    assert.deepEqual(foreign, []);
    assert.ok(!watch.requests.some((u) => u.includes(s.checkout_id) && !u.includes('/checkout/v1/sessions/') && !u.startsWith(t.stack.shop.url)), 'the id reaches only the API paths');
  });

  test('QR / EIP-681 path on a 375-px phone, by keyboard: address check, QR, link, paid from another wallet', async () => {
    const s = await t.stack.createSession({ price: '3.25', line_items_json: JSON.stringify([{ name: 'Espresso', quantity: 1, amount: '3.25' }]) });
    const context = await newContext(MOBILE, true);
    const watch = await watchPage(context);
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.getByText('No browser wallet found on this device.').waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll at 375 px');
    // The terms come before any input: amount, token and network, and the item list.
    assert.equal(await page.locator('#choose-h').textContent(), `Pay 3.25 USDC on ${CHAIN_NAME}`);
    assert.equal(await page.locator('#payer').inputValue(), '');
    await screenshot(page, '05-choose-mobile');
    await assertAxeClean(page, 'choose (mobile, no wallet)');

    // Keyboard only: Tab reaches the token radios, the address field and the submit button.
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      seen.push(
        await page.evaluate(() => {
          const e = document.activeElement as HTMLElement;
          return `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}:${e.getAttribute('type') ?? ''}:${e.textContent?.trim() ?? ''}`;
        }),
      );
      if (seen.at(-1)!.startsWith('input#payer')) break;
    }
    assert.ok(
      seen.some((x) => x.startsWith('input:radio')),
      `radios reachable: ${seen.join(' | ')}`,
    );
    assert.ok(seen.at(-1)!.startsWith('input#payer'), `address field reachable: ${seen.join(' | ')}`);

    await page.keyboard.type('0x1234');
    await page.keyboard.press('Enter');
    await page.locator('#payer-err').waitFor();
    assert.equal(await page.locator('#payer').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'payer', 'focus back on the field');
    await screenshot(page, '06-address-error-mobile');

    const payer = t.stack.dev.payers[1]!;
    await page.locator('#payer').fill(payer.address);
    await page.keyboard.press('Enter');
    await page.locator('[data-screen="pay"]').waitFor();
    const qr = page.locator('svg.qr');
    await qr.waitFor();
    assert.ok((await qr.locator('path').getAttribute('d'))!.length > 500, 'QR has modules');
    const amountWei = '3250000';
    const link = `ethereum:${t.stack.usdc.address}@${t.stack.dev.chainId}/transfer?address=${MERCHANT_WALLET}&uint256=${amountWei}`;
    assert.equal(await page.getByRole('link', { name: 'Open in wallet app' }).getAttribute('href'), link);
    assert.match((await page.locator('.terms').textContent())!, new RegExp(`3\\.25 USDC.*${MERCHANT_WALLET}.*${payer.address.toLowerCase()}`));
    assert.equal(await page.locator('#pay-h').textContent(), `Pay 3.25 USDC on ${CHAIN_NAME}`);
    assert.match((await page.locator('[role="timer"]').textContent())!, /^Time left to pay: (9|10):\d\d$/, 'the order’s window from the bind');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll on the QR screen');
    await screenshot(page, '07-qr-mobile');
    await assertAxeClean(page, 'pay (QR, mobile)');
    // Copy buttons put the exact values on the clipboard (not the formatted text around them).
    for (const [name, value, said] of [
      ['Copy address', MERCHANT_WALLET, 'Address copied.'],
      ['Copy amount', '3.25', 'Amount copied.'],
    ] as const) {
      const button = page.getByRole('button', { name });
      assert.equal(await button.getAttribute('data-copy'), value);
      await button.click();
      await page.locator('[role="status"]', { hasText: said }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), value);
    }
    await assertAxeClean(page, 'pay (QR, mobile, after copying)');

    // The payer pays from their own wallet app: a plain transfer from that address.
    const hash = await transferToken({ rpcUrl: t.stack.dev.rpcUrl, chainId: t.stack.dev.chainId, privateKey: payer.privateKey, token: t.stack.usdc.address, to: MERCHANT_WALLET, amount: BigInt(amountWei) });
    const releaseReturn = await holdNavigation(page, '/shop/success');
    await mineUntilCompleted(page);
    // The page learnt the hash from the status projection (the payer's wallet app never told it).
    await page.locator('#receipt-h').waitFor();
    assert.equal(await page.locator('#explorer-done').getAttribute('href'), `${EXPLORER_URL}/tx/${hash}`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll on the receipt');
    await screenshot(page, '08-completed-mobile');
    await assertAxeClean(page, 'completed (mobile)');
    releaseReturn();
    await page.waitForURL((u) => u.pathname === '/shop/success' && u.searchParams.get('checkout_id') === s.checkout_id, { timeout: 15_000 });
    assert.deepEqual(await watch.cspViolations(page).catch(() => []), []);
    assert.deepEqual(watch.notFound, [], 'no 404 (icon, assets) while paying');
  });
});
