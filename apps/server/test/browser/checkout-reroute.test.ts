// The hosted checkout page when the session moves on under it: the page re-reads the session and
// routes again (main.ts's router, reached from the payment flow through page.ts). Two ways in: the
// status poll reports that the attempt's order expired, and Tollgate refuses a bind with 409. The
// real Tollgate answers; the browser rewrites only what the case needs (an expired order, a 409).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { axeSerious, browserUnavailable } from './browser.ts';
import { hostedPageSuite } from './fixtures.ts';

const skip = browserUnavailable();

describe('hosted checkout page: the session moves on under the page (browser)', { skip, timeout: 180_000 }, () => {
  const t = hostedPageSuite();
  const { newContext } = t;

  test('the attempt’s order expired: the choice again, with the reason, and "cancel" back', async () => {
    const s = await t.stack.createSession();
    const context = await newContext();
    let orderExpired = false;
    // Once told to, the order behind the attempt reads as expired (the session stays BOUND).
    await context.route(/\/checkout\/v1\/sessions\/[^/]+\/status$/, async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, json: orderExpired ? { ...(await res.json()), order_status: 'EXPIRED' } : await res.json() });
    });
    await context.route(/\/checkout\/v1\/sessions\/[^/]+$/, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      await route.fulfill({ response: res, json: orderExpired && body.order ? { ...body, order: { ...body.order, status: 'EXPIRED' } } : body });
    });
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.locator('#payer').fill(t.stack.dev.payers[1]!.address);
    await page.locator('#payer').press('Enter');
    await page.locator('[data-screen="pay"]').waitFor();
    assert.equal(await page.locator('a.cancel').isVisible(), true);

    orderExpired = true;
    await page.locator('[data-screen="choose"]').waitFor({ timeout: 15_000 });
    await page.locator('.live', { hasText: 'Your previous payment attempt expired. Choose again.' }).waitFor();
    assert.equal(await page.locator('a.cancel').isVisible(), true, '"cancel" offered again: nothing was sent');
    assert.equal(await page.locator('[role="timer"]').isVisible(), true, 'the countdown still runs');
    assert.deepEqual(await axeSerious(page), []);
  });

  test('a bind refused with 409: the page re-reads the session, routes again and says why', async () => {
    const s = await t.stack.createSession();
    const context = await newContext();
    let binds = 0;
    await context.route(/\/checkout\/v1\/sessions\/[^/]+\/bind$/, async (route) => {
      binds++;
      await route.fulfill({ status: 409, json: { error: 'The session is bound to another payer', code: 'session_conflict', request_id: 'req_409' } });
    });
    const page = await context.newPage();
    await page.goto(s.url);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.locator('#payer').fill(t.stack.dev.payers[1]!.address);
    await page.locator('#payer').press('Enter');
    await page.locator('.live', { hasText: 'This checkout is already being paid from another address or with another token.' }).waitFor();
    assert.equal(binds, 1);
    // The real session is still OPEN: routed again to the choice (no pay screen, no final screen).
    assert.equal(await page.locator('[data-screen]').getAttribute('data-screen'), 'choose');
    assert.equal(await page.locator('#payer-err').isVisible(), false, 'not shown as a wrong address');
  });
});
