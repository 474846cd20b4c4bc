// GOAT's browser checkout SDK against the hosted checkout page, in Chromium: a merchant page on
// another loopback origin opens `/checkout?cs=…&o=<its origin>&n=<nonce>` in a popup, as GOAT's SDK
// does, and checks each message as the SDK does (exact origin, the popup as source, the nonce).
// The page must send goat:ready, then goat:success (paid by QR from another wallet on anvil) or
// goat:cancel, only to an origin among the session's return origins: a page on any other origin
// that opens the same checkout receives nothing. The parent page is this test's own code.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { mine, transferToken } from '@tollgate/devchain';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { axeSerious, browserUnavailable, launchBrowser, routeLogo, screenshot, watchPage } from './browser.ts';
import { recordingServer, startStack, type Stack } from './stack.ts';

const skip = browserUnavailable();

/** A merchant page with a "Pay" button that opens the checkout as GOAT's SDK does. */
const PARENT = (tollgate: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body><main><h1>Shop</h1><button id="pay" type="button">Pay</button></main><script>
window.events = []; window.raw = []; let popup = null; let nonce = '';
const TG = ${JSON.stringify(tollgate)};
document.getElementById('pay').onclick = () => {
  const b = new Uint8Array(16); crypto.getRandomValues(b);
  nonce = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  const u = new URL(window.target);
  u.searchParams.set('o', location.origin); u.searchParams.set('n', nonce);
  popup = window.open(u.toString(), 'goat_checkout_1', 'popup,width=440,height=760');
};
addEventListener('message', (e) => {
  window.raw.push({ origin: e.origin, data: e.data });
  if (e.origin !== TG || e.source !== popup || !e.data || e.data.n !== nonce) return;
  window.events.push(e.data);
  if (['goat:success', 'goat:cancel', 'goat:error'].includes(e.data.type)) popup.postMessage({ type: 'goat:ack', n: nonce }, TG);
});
</script></body></html>`;

describe('GOAT checkout SDK channel (browser)', { skip, timeout: 240_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let allowed: Awaited<ReturnType<typeof recordingServer>>;
  let other: Awaited<ReturnType<typeof recordingServer>>;
  const contexts: BrowserContext[] = [];

  before(async () => {
    [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
    const serve = (h: { url: string }, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(h.url === '/' ? PARENT(stack.server.url) : '<!doctype html><html lang="en"><head><title>Done</title></head><body><main><h1>Done</h1></main></body></html>');
    };
    [allowed, other] = await Promise.all([recordingServer(serve), recordingServer(serve)]);
    const ru = await stack.server.admin('PUT', `/admin/v1/merchants/${stack.creds.merchantId}/return-urls`, { return_urls: [`${stack.shop.url}/shop`, `${allowed.url}/done`] });
    assert.equal(ru.status, 200, ru.text);
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await Promise.all([allowed?.close(), other?.close()]);
    await stack?.close();
  });

  async function parent(site: { url: string }, checkoutUrl: string): Promise<{ page: Page; popup: Page; context: BrowserContext; watch: Awaited<ReturnType<typeof watchPage>> }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    await routeLogo(context, stack.logoUrl);
    const watch = await watchPage(context);
    const page = await context.newPage();
    await page.goto(`${site.url}/`);
    await page.evaluate((u) => void ((window as unknown as { target: string }).target = u), checkoutUrl);
    const [popup] = await Promise.all([context.waitForEvent('page'), page.click('#pay')]);
    await popup.locator('[data-screen="choose"]').waitFor();
    return { page, popup, context, watch };
  }
  const events = (p: Page) => p.evaluate(() => (window as unknown as { events: { type: string }[] }).events);
  const raw = (p: Page) => p.evaluate(() => (window as unknown as { raw: unknown[] }).raw);
  // On a timeout, say what the parent did receive (messages it filtered out included) and where
  // the popup is: a run once waited 60 s for goat:cancel in a loaded full run and never again alone.
  const waitEvent = async (p: Page, type: string, popup?: Page) => {
    try {
      await p.waitForFunction((t) => (window as unknown as { events: { type: string }[] }).events.some((e) => e.type === t), type, { timeout: 60_000 });
    } catch (err) {
      const seen = await raw(p).catch((e: Error) => e.message);
      throw new Error(`${type} never reached the parent: ${(err as Error).message}; messages received: ${JSON.stringify(seen)}; popup at ${popup?.url() ?? '?'}`);
    }
  };

  test('/checkout?cs=…: the session’s return origin gets goat:ready then goat:success with the payment; another origin gets nothing', async () => {
    const s = await stack.createSession({ price: '2.75', line_items_json: JSON.stringify([{ name: 'Tea', quantity: 1, amount: '2.75' }]), success_url: `${allowed.url}/done?order=7`, cancel_url: `${allowed.url}/done/cart` });
    const sdkUrl = `${stack.server.url}/checkout?cs=${s.checkout_id}&client_reference_id=cart-7`;

    // GOAT's entry redirects to the page with the id in the fragment; the page keeps the same
    // strict CSP and no framing, and drops COOP (which would sever the opener) only when opened
    // with an opener origin `o`.
    const entry = await fetch(`${stack.server.url}/checkout?cs=${s.checkout_id}&o=${encodeURIComponent(allowed.url)}&n=abcdef0123456789`, { redirect: 'manual' });
    assert.deepEqual([entry.status, entry.headers.get('location')], [302, `/checkout/pay?o=${encodeURIComponent(allowed.url)}&n=abcdef0123456789#${s.checkout_id}`]);
    const withO = await fetch(`${stack.server.url}/checkout/pay?o=${encodeURIComponent(allowed.url)}&n=abcdef0123456789`);
    const plain = await fetch(`${stack.server.url}/checkout/pay`);
    assert.equal(withO.headers.get('content-security-policy'), plain.headers.get('content-security-policy'));
    assert.match(withO.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.equal(withO.headers.get('x-frame-options'), 'DENY');
    assert.deepEqual([withO.headers.get('cross-origin-opener-policy'), plain.headers.get('cross-origin-opener-policy')], ['unsafe-none', 'same-origin']);

    // First a page on an origin the session does not name opens the checkout.
    const stranger = await parent(other, sdkUrl);

    // The merchant's page (the session's success_url origin) opens it too.
    const shop = await parent(allowed, sdkUrl);
    await waitEvent(shop.page, 'goat:ready');
    const u = new URL(shop.popup.url());
    assert.deepEqual(
      [u.pathname, u.hash, u.searchParams.has('cs'), u.searchParams.get('o'), u.searchParams.get('client_reference_id')],
      ['/checkout/pay', `#${s.checkout_id}`, false, allowed.url, 'cart-7'],
      'the id moved to the fragment; o, n and the rest stay',
    );
    assert.deepEqual(await axeSerious(shop.popup), [], 'axe on the checkout opened by the SDK');
    await screenshot(shop.popup, 'goat-sdk-popup-choose');

    // Paid by QR from another wallet.
    const payer = stack.dev.payers[1]!;
    await shop.popup.locator('#payer').fill(payer.address);
    await shop.popup.keyboard.press('Enter');
    await shop.popup.locator('[data-screen="pay"]').waitFor();
    const hash = await transferToken({ rpcUrl: stack.dev.rpcUrl, chainId: stack.dev.chainId, privateKey: payer.privateKey, token: stack.usdc.address, to: MERCHANT_WALLET, amount: 2_750_000n });
    const deadline = Date.now() + 60_000;
    while (!(await shop.popup.locator('[data-screen="completed"]').count())) {
      assert.ok(Date.now() < deadline, 'checkout not completed');
      await mine(stack.dev.rpcUrl, 1);
      await shop.popup.waitForTimeout(300);
    }
    await waitEvent(shop.page, 'goat:success');
    const got = (await events(shop.page)) as Record<string, unknown>[];
    assert.deepEqual(
      got.map((e) => e.type),
      ['goat:ready', 'goat:success'],
      'one ready, one terminal event',
    );
    const success = got[1]!;
    assert.equal(success.session_id, s.checkout_id);
    assert.equal(success.status, 'PAYMENT_CONFIRMED');
    assert.equal(success.tx_hash, hash);
    assert.match(String(success.order_id), /^ord_/);
    assert.equal(success.client_reference_id, 'cart-7');
    assert.deepEqual(await shop.watch.cspViolations(shop.popup).catch(() => []), []);
    // The stranger's popup, reloaded, shows the same completion and goes on to the success URL
    // 2.5 s later, yet its page heard nothing at all, through the whole payment.
    await stranger.popup.reload();
    await stranger.popup.waitForURL((x) => x.pathname === '/done', { timeout: 30_000 });
    assert.deepEqual(await raw(stranger.page), []);
  });

  test('"Cancel and return" sends goat:cancel to the opener before the page leaves', async () => {
    const s = await stack.createSession({ price: '1.25', line_items_json: JSON.stringify([{ name: 'Cookie', quantity: 1, amount: '1.25' }]), success_url: `${allowed.url}/done`, cancel_url: `${allowed.url}/done/cart` });
    const shop = await parent(allowed, `${stack.server.url}/checkout?cs=${s.checkout_id}`);
    await waitEvent(shop.page, 'goat:ready');
    await shop.popup.getByRole('link', { name: /^Cancel/ }).click();
    await waitEvent(shop.page, 'goat:cancel', shop.popup);
    assert.deepEqual(
      ((await events(shop.page)) as { type: string }[]).map((e) => e.type),
      ['goat:ready', 'goat:cancel'],
    );
    // A checkout without return URLs names no origin: nobody is told anything.
    const bare = await stack.createSession({ price: '1.25', line_items_json: JSON.stringify([{ name: 'Cookie', quantity: 1, amount: '1.25' }]), success_url: '', cancel_url: '' });
    const shop2 = await parent(allowed, `${stack.server.url}/checkout?cs=${bare.checkout_id}`);
    // Messages from one window arrive in order: once a marker the test posts from the popup (after
    // its choose screen, so after the page decided about its opener) has arrived, a goat:ready
    // sent before it would have too.
    await shop2.popup.evaluate(() => (window.opener as Window).postMessage('test-marker', '*'));
    await shop2.page.waitForFunction(() => (window as unknown as { raw: { data: unknown }[] }).raw.some((m) => m.data === 'test-marker'));
    assert.deepEqual(
      ((await raw(shop2.page)) as { data: unknown }[]).map((m) => m.data),
      ['test-marker'],
    );
  });
});
