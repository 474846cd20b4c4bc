// The portal's Machine payments page in Chromium at 1280 and 375 px with axe, on a real anvil chain:
// a paid machine payment with its signed receipt (opened from the row) and an x402 settlement with
// its transaction. Screenshots: test-artifacts/checkout/portal-machine-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { addPortalUser } from '../helpers/portal.ts';
import { challenge, finalize, pay, ROUTE, startMppStack, verify, type MppStack } from '../integration/mpp-fixtures.ts';
import { x402Body } from '../integration/x402-fixtures.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';

const skip = browserUnavailable();

describe('portal: machine payments (browser)', { skip, timeout: 240_000 }, () => {
  let st: MppStack;
  let browser: Browser;
  let pw: string;
  let challengeId: string;
  let receipt: string;
  let x402Tx: string;

  before(async () => {
    [st, browser] = await Promise.all([startMppStack('pglite', { settle: true }), launchBrowser()]);
    pw = await addPortalUser(st.s, st.m.merchantId, 'owner@machine.example');
    const payer = st.dev.payers[1]!.address.toLowerCase();
    const c = (await challenge(st, payer)).body;
    const tx = await pay(st, 1, c.recipient);
    await finalize(st);
    const v = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
    assert.equal(v.status, 200, v.text);
    challengeId = c.challenge_id;
    receipt = (await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments')).body.data[0].receipt;
    const body = await x402Body({ chainId: st.dev.chainId, token: st.usdc, payTo: MERCHANT_WALLET, nowSeconds: Math.floor(Date.now() / 1000), payerKey: st.dev.payers[4]!.privateKey, amount: 25_000n });
    const settled = await st.s.request('POST', '/x402/v2/settle', { body });
    assert.equal(settled.body.success, true, settled.text);
    x402Tx = settled.body.transaction;
  });
  after(async () => {
    await browser?.close();
    await st?.close();
  });

  async function open(page: Page) {
    await page.goto(`${st.s.url}/portal`);
    await page.getByLabel('Email').fill('owner@machine.example');
    await page.getByLabel('Password').fill(pw);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('link', { name: 'Machine payments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Machine payments' }).waitFor();
  }

  for (const [w, h] of [
    [1280, 900],
    [375, 812],
  ] as const) {
    test(`${w} px: the payment with its receipt, the settlement with its transaction`, async () => {
      const context = await browser.newContext({ viewport: { width: w, height: h }, ...(w < 700 ? { isMobile: true, hasTouch: true } : {}) });
      const watch = await watchPage(context);
      const page = await context.newPage();
      await open(page);
      const row = page.getByRole('table', { name: 'Machine payments' }).getByRole('row').filter({ hasText: ROUTE });
      assert.match((await row.textContent())!, new RegExp(`${ROUTE}.*1000000`));
      await row.locator('summary').click();
      assert.equal(await page.locator(`[data-receipt="${challengeId}"]`).textContent(), receipt, 'the signed receipt, whole');
      const x = page.getByRole('table', { name: 'x402 settlements' }).getByRole('row').filter({ hasText: 'USDC' });
      assert.match((await x.textContent())!, /25000USDC.*(pending|confirmed)/);
      assert.equal(await x.locator('[title]').last().getAttribute('title'), x402Tx);
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0, 'no sideways scroll');
      assert.deepEqual(await axeSerious(page), [], 'axe');
      assert.deepEqual(await watch.cspViolations(page), [], 'CSP');
      await screenshot(page, `portal-machine-${w}`);
      await context.close();
    });
  }
});
