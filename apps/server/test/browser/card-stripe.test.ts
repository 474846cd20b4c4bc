// Card payments with the STRIPE processor in a real browser (Debian chromium via playwright-core):
// the official `stripe` client, unchanged, talks to the loopback stand-in (helpers/stripe-standin.ts),
// whose hosted page takes the payer's "Pay" and then notifies Tollgate, signed like Stripe. Covered:
// a quick-pay card link (link → card → redirect to the processor's page → back → the signed
// notification → order INVOICED → session COMPLETED → quickpay.checkout.completed once), a payer
// who cancels on the processor's page (offered to continue, never bounced back by itself, one
// Checkout Session), and the hosted checkout page on the same mechanism. Screenshots go to
// test-artifacts/checkout/stripe-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { StripeSettings } from '../../src/config/secrets.ts';
import { cardsOf } from '../../src/rails/card/index.ts';
import { StripeStandIn } from '../helpers/stripe-standin.ts';
import { axeSerious, browserUnavailable, launchBrowser, routeLogo, screenshot, watchPage } from './browser.ts';
import { startStack, type Stack } from './stack.ts';

const skip = browserUnavailable();
const DESKTOP = { width: 1280, height: 900 };
const WHSEC = 'whsec_browser0123456789abcdef';

describe('card payments through the STRIPE processor (browser, loopback stand-in)', { skip, timeout: 240_000 }, () => {
  let stack: Stack;
  let stripe: StripeStandIn;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    stripe = await new StripeStandIn(WHSEC).start();
    [stack, browser] = await Promise.all([startStack({ config: { card: { processor: 'STRIPE', stripe: new StripeSettings('sk_test_standin', WHSEC, { host: '127.0.0.1', port: stripe.port, protocol: 'http' }, 300) } } }), launchBrowser()]);
    stripe.notifyUrl = `${stack.server.url}/card/v1/notifications/stripe`;
    const on = await stack.server.admin('POST', `/admin/v1/merchants/${stack.creds.merchantId}/card-rail`, { enabled: true });
    assert.equal(on.status, 200, on.text);
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await stack?.close();
    await stripe?.close();
  });

  async function newPage() {
    const context = await browser.newContext({ viewport: DESKTOP });
    contexts.push(context);
    await routeLogo(context, stack.logoUrl);
    const watch = await watchPage(context);
    return { page: await context.newPage(), watch };
  }

  async function cardLink(name: string): Promise<{ link_id: string; url: string }> {
    const p = await stack.server.signed(stack.creds, 'POST', '/api/v1/products', { body: { name, price: '12', fiat_currency: 'EUR', fiat_amount: '11.00' } });
    assert.equal(p.status, 200, p.text);
    const l = await stack.server.signed(stack.creds, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, payment_rails: 'crypto,card' } });
    assert.equal(l.status, 200, l.text);
    return l.body;
  }

  const completedEvents = (sessionId: string) => stack.hooks.hits.filter((h) => h.headers['x-webhook-event'] === 'quickpay.checkout.completed' && JSON.parse(h.body).payload?.session_id === sessionId);
  const checkoutSessionsOf = (orderId: string) => [...stripe.sessions.values()].filter((x) => x.client_reference_id === orderId);
  const quickpay = async (sessionId: string) => (await stack.server.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body;

  /** On the stand-in's page: its Checkout Session id. */
  async function onProcessorPage(page: Page): Promise<string> {
    await page.waitForURL((u) => u.toString().startsWith(`${stripe.url}/pay/cs_test_`));
    await page.getByRole('heading', { name: 'Pay 11.00 EUR' }).waitFor();
    return new URL(page.url()).pathname.split('/').pop()!;
  }

  async function assertAxeClean(page: Page, screen: string) {
    assert.deepEqual(await axeSerious(page), [], `axe serious/critical violations on ${screen}`);
  }

  test('quick-pay link: card → Stripe Checkout (stand-in) → back → signed notification → INVOICED, COMPLETED, quickpay.checkout.completed once', async () => {
    const link = await cardLink('Mug (Stripe)');
    const { page, watch } = await newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    await page.locator('#memo').fill('stripe 1');
    await page.getByRole('button', { name: 'Pay 11.00 EUR by card' }).click();
    const csId = await onProcessorPage(page);
    // The session's terms carried the processor's page: the page followed it, no TEST form shown.
    const created = [...stripe.sessions.values()].find((x) => x.id === csId)!;
    const sessionId = new URL(created.success_url).hash.slice(1);
    assert.match(sessionId, /^qps_/);
    const st0 = await quickpay(sessionId);
    assert.deepEqual([st0.status, st0.terms.processor, st0.terms.payment_state, st0.terms.next_action], ['OPEN', 'STRIPE', 'pending', { type: 'redirect', url: created.url }]);
    assert.equal(created.success_url, `${link.url}?card_return=paid#${sessionId}`);
    assert.equal(created.cancel_url, `${link.url}?card_return=cancelled#${sessionId}`);
    // Stripe's page closes with Tollgate's window where Stripe allows (at least 30 minutes).
    assert.ok(created.expires_at >= st0.terms.expires_at && created.expires_at - Math.floor(Date.now() / 1000) <= 36 * 60, `expires_at ${created.expires_at}`);
    assert.equal(
      watch.requests.some((u) => u.includes('/card/test-payment')),
      false,
    );
    await screenshot(page, 'stripe-01-processor-page');

    // The notification trails the payer: held until the page is seen waiting for it (a fixed delay
    // raced the page on a loaded machine), then sent.
    let release!: () => void;
    stripe.notifyAfter = new Promise<void>((r) => (release = r));
    await page.getByRole('button', { name: 'Pay 11.00 EUR' }).click();
    await page.waitForURL((u) => u.toString().startsWith(`${link.url}?card_return=paid`));
    await page.locator('[data-screen="card-confirming"]').waitFor();
    await screenshot(page, 'stripe-02-confirming');
    await assertAxeClean(page, 'card confirming');
    release();
    stripe.notifyAfter = undefined;
    await page.locator('[data-screen="completed"]').waitFor({ timeout: 30_000 });
    await page.getByText('Tollgate has confirmed your card payment.').waitFor();
    await screenshot(page, 'stripe-03-completed');
    assert.deepEqual(
      stripe.notified.filter(([, status]) => status !== 200),
      [],
      'every notification verified and accepted',
    );
    assert.deepEqual(
      stripe.notified.map(([type]) => type),
      ['checkout.session.completed', 'payment_intent.succeeded'],
    );

    const st = await quickpay(sessionId);
    assert.deepEqual([st.status, st.order_status], ['COMPLETED', 'INVOICED']);
    const order = await stack.server.signed(stack.creds, 'GET', `/api/v1/orders/${st.order_id}`);
    assert.deepEqual([order.body.status, order.body.flow, order.body.payment_reference], ['INVOICED', 'FIAT_STRIPE', created.payment_intent]);
    const deadline = Date.now() + 30_000;
    while (completedEvents(sessionId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    // Both notifications were answered (above); a run of the reconcile worker reads the processor's
    // events list again; then every delivery answered: a second completion would be in the receiver.
    await cardsOf(stack.server.tg.deps).reconcile();
    await stack.webhooksDelivered();
    const hits = completedEvents(sessionId);
    assert.equal(hits.length, 1, 'quickpay.checkout.completed exactly once');
    const payload = JSON.parse(hits[0]!.body).payload;
    assert.deepEqual([payload.rail, payload.memo, payload.order_status, payload.order_id], ['card', 'stripe 1', 'INVOICED', st.order_id]);
    assert.equal(checkoutSessionsOf(st.order_id).length, 1, 'one Stripe Checkout Session');
    // A reload after completion shows it completed; nothing sends the payer to pay again.
    await page.reload();
    await page.locator('[data-screen="completed"]').waitFor();
    assert.deepEqual(await watch.cspViolations(page), []);
  });

  test("quick-pay link: the payer cancels on the processor's page → offered to continue (not sent back by itself), same Checkout Session, then pays", async () => {
    const link = await cardLink('Mug (cancel first)');
    const { page } = await newPage();
    await page.goto(link.url);
    await page.locator('[data-screen="link"]').waitFor();
    await page.getByRole('button', { name: 'Pay 11.00 EUR by card' }).click();
    const csId = await onProcessorPage(page);
    const navigations: string[] = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations.push(f.url());
    });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((u) => u.toString().startsWith(`${link.url}?card_return=cancelled`));
    await page.locator('[data-screen="card-redirect"]').waitFor();
    await page.getByText('You left the card payment page without paying.').waitFor();
    // Every request of the page answered and 500 ms without one: a redirect decided on an answer
    // would have started. The page went back to Tollgate's only.
    await page.waitForLoadState('networkidle');
    assert.ok(page.url().startsWith(link.url), "still on Tollgate's page: no automatic redirect");
    assert.deepEqual(
      navigations.filter((u) => !u.startsWith(link.url)),
      [],
      'no navigation to the processor after the return',
    );
    await screenshot(page, 'stripe-04-cancelled');
    await assertAxeClean(page, 'card redirect (cancelled)');
    const sessionId = new URL(page.url()).hash.slice(1);
    assert.equal((await quickpay(sessionId)).status, 'OPEN');
    // A plain reload of the attempt offers the same choice (no marker needed).
    await page.goto(`${link.url}#${sessionId}`);
    await page.locator('[data-screen="card-redirect"]').waitFor();
    stripe.notifyDelayMs = 0;
    await page.getByRole('button', { name: 'Continue to card payment' }).click();
    assert.equal(await onProcessorPage(page), csId, 'the same Checkout Session');
    await page.getByRole('button', { name: 'Pay 11.00 EUR' }).click();
    await page.locator('[data-screen="completed"]').waitFor({ timeout: 30_000 });
    const st = await quickpay(sessionId);
    assert.deepEqual([st.status, st.order_status], ['COMPLETED', 'INVOICED']);
    assert.equal(checkoutSessionsOf(st.order_id).length, 1);
  });

  test('hosted checkout page: card → Stripe Checkout (stand-in) → back → COMPLETED through the same next action', async () => {
    const s = await stack.createSession({ payment_rails: 'crypto,fiat', fiat_currency: 'EUR', fiat_amount: '11.00' });
    const { page } = await newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.getByRole('button', { name: 'Pay 11.00 EUR by card' }).click();
    const csId = await onProcessorPage(page);
    const created = stripe.sessions.get(csId)!;
    assert.equal(created.success_url, `${stack.server.url}/checkout/pay?card_return=paid#${s.checkout_id}`);
    stripe.notifyDelayMs = 1000;
    await page.getByRole('button', { name: 'Pay 11.00 EUR' }).click();
    await page.waitForURL((u) => u.toString().includes('card_return=paid'));
    await page.locator('[data-screen="completed"]').waitFor({ timeout: 30_000 });
    await screenshot(page, 'stripe-05-checkout-completed');
    const st = (await stack.server.request('GET', `/checkout/v1/sessions/${s.checkout_id}/status`)).body;
    assert.deepEqual([st.status, st.order_status], ['COMPLETED', 'INVOICED']);
    assert.equal(checkoutSessionsOf(st.order_id).length, 1);
  });
});
