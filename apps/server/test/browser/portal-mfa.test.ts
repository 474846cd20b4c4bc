// Two-factor sign-in and password reset in a real browser (Debian chromium via playwright-core):
// a user sets up TOTP from Settings (QR + key, confirmed with a code), signs out, signs in with the
// code the form asks for; the operator's reset link opens the reset page; an enrollment session
// (merchant requires a factor) sees only the set-up. axe and CSP on each screen, 1280 and 375 px.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { addPortalUser } from '../helpers/portal.ts';
import { fakeChain, startTestServer, type TestServer } from '../helpers/server.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';

const skip = browserUnavailable();

function totpAt(base32: string, ms: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 30_000)));
  const hm = createHmac('sha1', key).update(counter).digest();
  const o = hm[hm.length - 1]! & 0xf;
  return String((hm.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

describe('portal two-factor sign-in and reset (browser, pglite)', { skip, timeout: 240_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let merchantId: string;

  before(async () => {
    [server, browser] = await Promise.all([startTestServer({ backend: 'pglite', chains: [fakeChain()] }), launchBrowser()]);
    merchantId = (await server.createMerchant({ name: 'Two Factor Shop' })).merchantId;
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function clean(page: Page, watch: Awaited<ReturnType<typeof watchPage>>, what: string) {
    assert.deepEqual(await axeSerious(page), [], `axe on ${what}`);
    assert.deepEqual(await watch.cspViolations(page), [], `CSP on ${what}`);
  }

  for (const width of [1280, 375]) {
    test(`set up TOTP in Settings, sign in with a code, reset by the operator's link (${width} px)`, async () => {
      const email = `user${width}@2fa.example`;
      const pw = await addPortalUser(server, merchantId, email, 'owner');
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const watch = await watchPage(context);
      const page = await context.newPage();
      await page.goto(`${server.url}/portal`);
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('Password', { exact: true }).fill(pw);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.goto(`${server.url}/portal/#/settings`);
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      await page.getByRole('img', { name: 'QR code of the authenticator set-up' }).waitFor();
      const secret = (await page.locator('code.secret').first().textContent())!.trim();
      await clean(page, watch, 'totp set-up');
      await screenshot(page, `portal-totp-setup-${width}`);
      await page.getByLabel('Code from the app').fill(totpAt(secret, server.clock.now()));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByText('Two-factor sign-in is on.').waitFor();
      const codes = (await page.locator('[data-secret^="Recovery codes"]').textContent())!.trim().split('\n');
      assert.equal(codes.length, 10);
      await clean(page, watch, 'recovery codes');
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();

      // Sign-in: the form asks for the code after the password.
      server.clock.advance(30);
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('Password', { exact: true }).fill(pw);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('Authentication code').waitFor();
      await clean(page, watch, 'sign-in second step');
      await screenshot(page, `portal-totp-signin-${width}`);
      await page.getByLabel('Authentication code').fill(totpAt(secret, server.clock.now()));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

      // The operator's reset link: a new password; the old session ends.
      const link = await server.admin('POST', '/admin/v1/portal-users/password-resets', { email });
      assert.equal(link.status, 201, link.text);
      const other = await context.newPage();
      // The link is built on PUBLIC_BASE_URL; the test server listens on another port.
      const token = new URL(link.body.reset_url).hash.split('/').pop()!;
      await other.goto(`${server.url}/portal/#/reset/${token}`);
      await other.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor();
      await clean(other, watch, 'reset page');
      await screenshot(other, `portal-reset-${width}`);
      await other.getByLabel('New password', { exact: true }).fill('a brand new password 42');
      await other.getByRole('button', { name: 'Set password' }).click();
      await other.getByText(`Password changed for ${email}`).waitFor();
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      assert.deepEqual(watch.notFound, [], 'no missing asset');
      await context.close();
    });
  }

  test('an enrollment session sees only the set-up; "Forgot password?" without SMTP says whom to ask', async () => {
    const owner = `owner-strict@2fa.example`;
    const m = (await server.createMerchant({ name: 'Strict Shop' })).merchantId;
    await addPortalUser(server, m, owner, 'owner');
    await server.db.query('UPDATE merchants SET portal_require_totp = true WHERE id = $1', [m]);
    const devPw = await addPortalUser(server, m, 'dev-strict@2fa.example', 'developer');
    const context = await browser.newContext({ viewport: { width: 375, height: 900 } });
    const watch = await watchPage(context);
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
    await page.goto(`${server.url}/portal`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    // The first visit asks /portal/api/session/state (200 either way): no 401 in the console.
    assert.deepEqual(consoleErrors, [], 'a visitor who is not signed in sees no error in the console');
    await page.getByText('Forgot password?').click();
    await page.getByLabel('Sign-in address').fill('dev-strict@2fa.example');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText('ask your operator for a reset link').waitFor();
    await page.getByLabel('Email', { exact: true }).fill('dev-strict@2fa.example');
    await page.getByLabel('Password', { exact: true }).fill(devPw);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Set up two-factor sign-in' }).waitFor();
    assert.equal(await page.getByRole('navigation').count(), 0, 'no navigation: nothing else is allowed');
    await clean(page, watch, 'enrollment page');
    await screenshot(page, 'portal-totp-enrollment-375');
    await context.close();
  });
});
