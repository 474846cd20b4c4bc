// The merchant portal in a real browser (Debian chromium via playwright-core) against a real
// Tollgate with its webhook dispatcher: sign in, find an order by tx hash, redeliver a failed
// webhook, add an endpoint choosing its events, rotate an API key, export CSV and compare with the
// database, another merchant's order is "Not found", invite a developer who signs in with a
// restricted role; axe-core on each page, no CSP violation, screenshots at 1280 px and 375 px
// (test-artifacts/checkout/portal-*.png).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { WEBHOOK_EVENTS } from '@tollgate/protocol';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, setupMerchant } from '../helpers/orders.ts';
import { addPortalUser } from '../helpers/portal.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';
import { recordingServer } from './stack.ts';
import { EXPORT_COLUMNS } from '../../src/portal/data/csv.ts';

const skip = browserUnavailable();
const TX = `0x${'ab12'.repeat(16)}`;

for (const backend of backends()) {
  describe(`merchant portal (browser, ${backend})`, { skip, timeout: 240_000 }, () => {
    let server: TestServer;
    let browser: Browser;
    let hook: Awaited<ReturnType<typeof recordingServer>>;
    let a: Creds;
    let b: Creds;
    let ownerPw: string;
    const orders: string[] = [];
    let orderB: string;

    before(async () => {
      hook = await recordingServer((_h, res) => res.writeHead(500).end('down'));
      [server, browser] = await Promise.all([startTestServer({ backend, chains: [fakeChain()] }), launchBrowser()]);
      a = await setupMerchant(server, { name: 'Acme Coffee' });
      b = await setupMerchant(server, { name: 'Other Shop' });
      ownerPw = await addPortalUser(server, a.merchantId, 'owner@acme.example');
      for (let i = 0; i < 3; i++) {
        const r = await server.signed(a, 'POST', '/api/v1/orders', { body: buildOrderBody({ dapp_order_id: `cafe-${i}` }) });
        assert.equal(r.status, 402, r.text);
        orders.push(r.body.order_id);
      }
      orderB = (await server.signed(b, 'POST', '/api/v1/orders', { body: buildOrderBody() })).body.order_id;
      // Fixture: the chain watcher would record the paying transaction; here the hash is set directly.
      await server.db.query('UPDATE orders SET tx_hash = $1 WHERE id = $2', [TX, orders[1]]);
      const w = await server.admin('POST', `/admin/v1/merchants/${a.merchantId}/webhooks`, { url: `${hook.url}/hook`, events: ['order.invoiced'] });
      assert.equal(w.status, 201, w.text);
      await server.admin('POST', `/admin/v1/merchants/${a.merchantId}/webhooks/trigger`, { event: 'order.invoiced' });
      for (let i = 0; i < 100; i++) {
        const { rows } = await server.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE merchant_id = $1', [a.merchantId]);
        if (rows[0]?.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    after(async () => {
      await browser?.close();
      await server?.close();
      await hook?.close();
    });

    async function signIn(page: Page, email: string, password: string) {
      await page.goto(`${server.url}/portal`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    }

    async function clean(page: Page, watch: Awaited<ReturnType<typeof watchPage>>, what: string) {
      assert.deepEqual(await axeSerious(page), [], `axe on ${what}`);
      assert.deepEqual(await watch.cspViolations(page), [], `CSP on ${what}`);
    }

    test('owner: sign in, find by tx hash, redeliver, add an endpoint with chosen events, rotate a key, export CSV, another merchant is not found', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const watch = await watchPage(context);
      const page = await context.newPage();
      await signIn(page, 'owner@acme.example', ownerPw);
      await clean(page, watch, 'overview');
      await screenshot(page, 'portal-overview-desktop');
      // keyboard: the skip link is the first focusable element; Enter on it moves focus to the
      // content without changing the route
      assert.equal(await page.evaluate(() => document.querySelector('a[href], button, input, select, textarea, [tabindex]')?.textContent), 'Skip to content');
      await page.locator('.skip').focus();
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
      assert.match(page.url(), /#\/?$|#\/overview$|\/portal\/$/);

      // find an order by its transaction hash, with the keyboard
      await page.getByRole('link', { name: 'Orders' }).click();
      await page.getByRole('heading', { name: 'Orders', exact: true, level: 1 }).waitFor();
      await page.getByLabel('Search').fill(TX);
      await page.keyboard.press('Enter');
      await page.waitForURL(/q=0x/);
      // The list re-renders when the search answer arrives: wait for it, then exactly the paid order.
      await page.waitForFunction(() => document.querySelectorAll('a[href^="#/orders/ord_"]').length === 1);
      const link = page.getByRole('link', { name: orders[1]! });
      await link.waitFor();
      await clean(page, watch, 'orders');
      await link.click();
      await page.getByRole('heading', { name: `Order ${orders[1]}` }).waitFor();
      await clean(page, watch, 'order detail');
      await screenshot(page, 'portal-order-desktop');

      // redeliver the failed webhook
      await page.goto(`${server.url}/portal/#/webhooks`);
      await page.getByRole('heading', { name: 'Webhooks', exact: true, level: 1 }).waitFor();
      await clean(page, watch, 'webhooks');
      await page.getByRole('button', { name: 'Redeliver' }).first().click();
      await page
        .getByRole('status')
        .filter({ hasText: /Delivery (requeued|redelivered|already_queued)/ })
        .waitFor();

      // add an endpoint that receives a machine-payment event and not every order event: the
      // checkboxes list all of WEBHOOK_EVENTS, the order lifecycle checked by default
      const events = page.getByRole('group', { name: 'Events sent to the new endpoint' });
      assert.deepEqual(await events.getByRole('checkbox').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)), [...WEBHOOK_EVENTS]);
      assert.deepEqual(await events.getByRole('checkbox', { checked: true }).evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)), ['order.payment_confirmed', 'order.invoiced', 'order.expired', 'order.cancelled', 'order.failed']);
      await page.getByLabel('New endpoint URL').fill(`${hook.url}/machine`);
      for (const e of ['order.payment_confirmed', 'order.expired', 'order.cancelled', 'order.failed']) await events.getByLabel(e, { exact: true }).uncheck();
      await events.getByLabel('mpp.payment.confirmed', { exact: true }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      assert.match((await page.locator('[data-secret="Signing secret"]').textContent())!, /^whsec_/);
      const {
        rows: [made],
      } = await server.db.query<{ events: string[] }>('SELECT events FROM webhook_endpoints WHERE merchant_id = $1 AND url = $2', [a.merchantId, `${hook.url}/machine`]);
      assert.deepEqual(made?.events, ['order.invoiced', 'mpp.payment.confirmed']);
      // the endpoints table shows the new endpoint at once, no reload
      const listed = page
        .getByRole('table', { name: 'Endpoints' })
        .getByRole('row')
        .filter({ hasText: `${hook.url}/machine` });
      await listed.waitFor();
      assert.match((await listed.textContent())!, /order\.invoiced, mpp\.payment\.confirmed/);
      assert.equal(await page.getByLabel('New endpoint URL').inputValue(), '', 'the form is cleared for the next endpoint');
      await clean(page, watch, 'webhooks, endpoint added');
      await screenshot(page, 'portal-webhooks-desktop');
      // none chosen: said so, nothing created
      await page.getByLabel('New endpoint URL').fill(`${hook.url}/none`);
      for (const e of ['order.invoiced', 'mpp.payment.confirmed']) await events.getByLabel(e, { exact: true }).uncheck();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('alert').filter({ hasText: 'Choose at least one event' }).waitFor();
      const {
        rows: [count],
      } = await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE merchant_id = $1', [a.merchantId]);
      assert.equal(count!.n, 2);

      // rotate the API key: a new secret shown once, the old key revoked
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { name: 'API keys', exact: true, level: 1 }).waitFor();
      await page.locator(`[data-rotate="${a.apiKey}"]`).click();
      const secret = await page.locator('[data-secret="API secret"]').textContent();
      assert.ok(secret && secret.length > 20);
      const { rows: keys } = await server.db.query<{ api_key: string; revoked_at: Date | null }>('SELECT api_key, revoked_at FROM api_keys WHERE merchant_id = $1', [a.merchantId]);
      assert.ok(keys.find((k) => k.api_key === a.apiKey)!.revoked_at, 'old key revoked');
      assert.equal(keys.filter((k) => !k.revoked_at).length, 1);
      await clean(page, watch, 'api keys');
      await page.reload();
      await page.getByRole('heading', { name: 'API keys', exact: true, level: 1 }).waitFor();
      assert.equal(await page.content().then((h) => h.includes(secret!)), false, 'the secret is not shown again');

      // export CSV and compare with the database
      await page.getByRole('link', { name: 'Exports' }).click();
      const href = await page.locator('[data-export="orders"]').getAttribute('href');
      const csv = await page.evaluate(async (u) => (await fetch(u!)).text(), href);
      const lines = csv.trim().split('\r\n');
      // One column set for both exports (docs/portal.md "Exports"): the row's kind first.
      assert.deepEqual(lines[0]!.split(','), [...EXPORT_COLUMNS]);
      const { rows: db } = await server.db.query<{ id: string; dapp_order_id: string; amount_wei: string; tx_hash: string | null }>(
        'SELECT id, dapp_order_id, amount_wei::text AS amount_wei, tx_hash FROM orders WHERE merchant_id = $1 ORDER BY created_at, id',
        [a.merchantId],
      );
      assert.equal(lines.length - 1, db.length);
      const cols = lines[0]!.split(',');
      lines.slice(1).forEach((l, i) => {
        const cells = l.split(',');
        const row = Object.fromEntries(cols.map((c, j) => [c, cells[j]]));
        assert.equal(row.row_type, 'order');
        assert.equal(row.order_id, db[i]!.id);
        assert.equal(row.dapp_order_id, db[i]!.dapp_order_id);
        assert.equal(row.amount_wei, db[i]!.amount_wei);
        assert.equal(row.amount, (Number(db[i]!.amount_wei) / 1e6).toString());
        assert.equal(row.tx_hash, db[i]!.tx_hash ?? '');
      });

      // checkout sessions page, and the return-URL allowlist edited by the owner
      await page.getByRole('link', { name: 'Checkout' }).click();
      await page.getByRole('heading', { name: 'Checkout sessions', exact: true, level: 1 }).waitFor();
      await clean(page, watch, 'checkout sessions');
      await page.getByRole('link', { name: 'Callbacks' }).click();
      await page.getByRole('heading', { name: 'Callbacks', exact: true, level: 1 }).waitFor();
      await clean(page, watch, 'callbacks');
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByLabel('Allowed success/cancel URLs, one per line').fill('https://acme.example/thanks\nhttps://acme.example/cart');
      await page.getByRole('button', { name: 'Save return URLs' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved 2 return URL(s).' }).waitFor();
      await clean(page, watch, 'settings');
      const {
        rows: [merchant],
      } = await server.db.query<{ return_urls: string[] }>('SELECT return_urls FROM merchants WHERE id = $1', [a.merchantId]);
      assert.deepEqual(merchant!.return_urls, ['https://acme.example/thanks', 'https://acme.example/cart']);

      // another merchant's order id: not found
      await page.goto(`${server.url}/portal/#/orders/${orderB}`);
      await page.getByRole('heading', { name: 'Not found', exact: true, level: 1 }).waitFor();
      await context.close();
    });

    test('an invited developer signs in with a restricted role; 375 px layout', async () => {
      const owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const op = await owner.newPage();
      await signIn(op, 'owner@acme.example', ownerPw);
      await op.getByRole('link', { name: 'Team' }).click();
      await op.getByLabel('Email').fill('dev@acme.example');
      await op.getByLabel('Role').selectOption('developer');
      await op.getByRole('button', { name: 'Create invitation link' }).click();
      const link = (await op.locator('[data-secret^="Invitation link"]').textContent())!;
      assert.match(link, /\/portal\/#\/invite\//);
      await owner.close();

      const context = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
      const watch = await watchPage(context);
      const page = await context.newPage();
      await page.goto(link.replace('http://127.0.0.1:8402', server.url));
      await page.getByLabel('Choose a password').fill('developer-password-1');
      await page.getByRole('button', { name: 'Create my account' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await clean(page, watch, 'overview at 375 px');
      assert.equal(await page.getByRole('link', { name: 'Team' }).count(), 0, 'no Team page for a developer');
      assert.match((await page.locator('.who').textContent())!, /developer/);
      const put = await page.evaluate(async () => {
        const s = await (await fetch('/portal/api/session')).json();
        return (await fetch('/portal/api/settings', { method: 'PUT', headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrf_token }, body: JSON.stringify({ name: 'Hijack', logo_url: null }) })).status;
      });
      assert.equal(put, 403, 'a developer cannot change settings');
      await page.getByRole('link', { name: 'Orders' }).click();
      await page.getByRole('heading', { name: 'Orders', exact: true, level: 1 }).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `no sideways scroll of the page at 375 px (${overflow})`);
      await screenshot(page, 'portal-orders-375');
      await context.close();
    });

    test('account: revoke an invitation, change the password (the other session ends), sign out everywhere; 1280 and 375 px', async () => {
      const pw = await addPortalUser(server, a.merchantId, 'account@acme.example', 'owner');
      const wide = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const watch = await watchPage(wide);
      const page = await wide.newPage();
      await signIn(page, 'account@acme.example', pw);
      await page.getByRole('link', { name: 'Team' }).click();
      await page.getByLabel('Email').fill('maybe@acme.example');
      await page.getByRole('button', { name: 'Create invitation link' }).click();
      await page.locator('[data-secret^="Invitation link"]').waitFor();
      await page.reload();
      await page
        .getByRole('row', { name: /maybe@acme\.example/ })
        .getByRole('button', { name: 'Revoke' })
        .click();
      await page.getByText('Revoked the invitation of maybe@acme.example').waitFor();
      await clean(page, watch, 'team page with an open invitation');

      const narrow = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
      const phone = await narrow.newPage();
      await signIn(phone, 'account@acme.example', pw);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByLabel('Current password').fill(pw);
      await page.getByLabel('New password').fill('a-brand-new-password-1');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText(/Password changed; 1 other session/).waitFor();
      await clean(page, watch, 'settings: your account');
      await screenshot(page, 'portal-account-1280');
      const status = (p: Page) => p.evaluate(async () => (await fetch('/portal/api/session')).status);
      assert.equal(await status(phone), 401, 'the other session ended');
      assert.equal(await status(page), 200, 'this one stays');

      await signIn(phone, 'account@acme.example', 'a-brand-new-password-1');
      await phone.getByRole('link', { name: 'Settings' }).click();
      const everywhere = phone.getByRole('button', { name: 'Sign out everywhere' });
      await everywhere.scrollIntoViewIfNeeded();
      await screenshot(phone, 'portal-account-375');
      await everywhere.click();
      await phone.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      assert.equal(await status(page), 401, 'every session of the user ended');
      await wide.close();
      await narrow.close();
    });
  });
}
