// A returning payer on the hosted checkout page (docs/hosted-checkout.md "Coming back through a new
// session"), real browser against a real Tollgate: the payer leaves a checkout after entering their
// address and comes back through a new session with the same price — the new page shows the
// payment to make (the earlier order is superseded), and the page left open on the first session
// offers the choice again. An order the merchant created through the API is never superseded:
// the page says why it cannot be paid from that address.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { browserUnavailable } from './browser.ts';
import { hostedPageSuite } from './fixtures.ts';

const skip = browserUnavailable();

describe('hosted checkout page: a returning payer (browser)', { skip, timeout: 180_000 }, () => {
  const t = hostedPageSuite();
  const { newContext } = t;

  async function open(url: string): Promise<Page> {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('[data-screen="choose"]').waitFor();
    return page;
  }
  async function enterPayer(page: Page, address: string) {
    await page.locator('#payer').fill(address);
    await page.locator('#payer').press('Enter');
  }
  const orderStatus = async (id: string) => (await t.stack.server.signed(t.stack.creds, 'GET', `/api/v1/orders/${id}`)).body.status as string;

  test('a new session with the same price: the pay screen, not a refusal; the first page offers the choice again', async () => {
    const payer = t.stack.dev.payers[2]!.address;
    const first = await t.stack.createSession({ price: '6.40', line_items_json: undefined });
    const left = await open(first.url);
    await enterPayer(left, payer);
    await left.locator('[data-screen="pay"]').waitFor();
    const firstOrder = (await t.stack.server.request('GET', `/checkout/v1/sessions/${first.checkout_id}/status`)).body.order_id as string;

    // The payer comes back through the merchant's site: a new session, same price, same address.
    const second = await t.stack.createSession({ price: '6.40', line_items_json: undefined });
    const back = await open(second.url);
    await enterPayer(back, payer);
    await back.locator('[data-screen="pay"]').waitFor();
    assert.equal(await back.locator('.live', { hasText: 'already being paid' }).count(), 0);
    const st = (await t.stack.server.request('GET', `/checkout/v1/sessions/${second.checkout_id}/status`)).body;
    assert.deepEqual([st.status, st.order_status], ['BOUND', 'CHECKOUT_VERIFIED']);
    assert.equal(await orderStatus(firstOrder), 'EXPIRED', 'the earlier order was superseded');

    // The tab left open on the first session sees its attempt end and offers the choice again.
    await left.locator('[data-screen="choose"]').waitFor({ timeout: 20_000 });
    await left.locator('.live', { hasText: 'Your previous payment attempt expired. Choose again.' }).waitFor();
  });

  test('an order the merchant created through the API with those terms: the page says why and stays on the choice', async () => {
    const payer = t.stack.dev.payers[3]!.address;
    const api = await t.stack.server.signed(t.stack.creds, 'POST', '/api/v1/orders', {
      body: { dapp_order_id: 'returning-browser-1', chain_id: t.stack.dev.chainId, token_symbol: 'USDC', from_address: payer, amount_wei: '6410000' },
    });
    assert.equal(api.status, 402, api.text);
    const s = await t.stack.createSession({ price: '6.41', line_items_json: undefined });
    const page = await open(s.url);
    await enterPayer(page, payer);
    await page.locator('.live', { hasText: 'An earlier payment of this amount from this address to this merchant is still open' }).waitFor();
    assert.equal(await page.locator('[data-screen]').getAttribute('data-screen'), 'choose');
    assert.equal(await orderStatus(api.body.order_id), 'CHECKOUT_VERIFIED');
  });
});
