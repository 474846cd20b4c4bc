// Products and payment links managed from the portal (issue 29 item 9) through real HTTP: the same
// service as the merchant API (what the portal makes, the API reads back), edit and deactivate, the
// share code (the QR path of the link's page), a link's sessions with the payer's reference, input
// refused with a code and nothing changed, and another merchant's link not found. Machine payments
// and x402 settlements with their receipts are checked on anvil in portal-machine.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/db.ts';
import { PAYER, setupMerchant } from '../helpers/orders.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from '../integration/checkout-fixtures.ts';
import { qrPath } from '../../src/portal/qr.ts';

for (const backend of backends()) {
  describe(`portal: products and payment links (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let other: Creds;
    let p: PortalClient;
    let viewer: PortalClient;

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s, { name: 'Link Shop', topUp: '10.00' });
      other = await setupMerchant(s, { name: 'Other Shop' });
      p = new PortalClient(s);
      assert.equal((await p.login('owner@links.example', await addPortalUser(s, m.merchantId, 'owner@links.example'))).status, 200);
      viewer = new PortalClient(s);
      assert.equal((await viewer.login('viewer@links.example', await addPortalUser(s, m.merchantId, 'viewer@links.example', 'viewer'))).status, 200);
    });
    after(() => s?.close());

    test('a product: created, edited, deactivated in the portal; the merchant API reads the same product', async () => {
      const made = await p.call('POST', '/portal/api/products', { name: 'Coffee beans', price: '12.50', inventory: 5 });
      assert.equal(made.status, 201, made.text);
      const id = made.body.product_id;
      const edited = await p.call('POST', `/portal/api/products/${id}`, { price: '13', description: 'Whole beans, 250 g' });
      assert.equal(edited.status, 200, edited.text);
      assert.deepEqual([edited.body.name, edited.body.price, edited.body.inventory, edited.body.description], ['Coffee beans', '13', 5, 'Whole beans, 250 g']);
      const api = await s.signed(m, 'GET', `/api/v1/products/${id}`);
      assert.deepEqual(api.body, edited.body, 'one product, whichever door');
      const off = await p.call('POST', `/portal/api/products/${id}`, { active: false });
      assert.equal(off.body.active, false);
      const list = await viewer.call('GET', '/portal/api/products');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((x: any) => [x.product_id, x.active]),
        [[id, false]],
      );
      // refused input: a code, nothing changed; a viewer may read but not write
      const bad = await p.call('POST', `/portal/api/products/${id}`, { price: '-1' });
      assert.equal(bad.status, 400, bad.text);
      assert.ok(bad.body.code);
      assert.equal((await s.signed(m, 'GET', `/api/v1/products/${id}`)).body.price, '13');
      const denied = await viewer.call('POST', '/portal/api/products', { name: 'Nope', price: '1' });
      assert.deepEqual([denied.status, denied.body.code], [403, 'forbidden']);
      assert.equal((await p.call('GET', '/portal/api/products')).body.data.length, 1, 'nothing created');
    });

    test('a payment link: created, shared (QR of its page), its sessions with the payer reference, deactivated', async () => {
      const prod = (await p.call('POST', '/portal/api/products', { name: 'Tea', price: '4.20' })).body;
      const made = await p.call('POST', '/portal/api/payment-links', { product_id: prod.product_id, max_payments: 10 });
      assert.equal(made.status, 201, made.text);
      const l = made.body;
      assert.match(l.url, /\/quickpay\/pay\/pl_/);
      assert.deepEqual((await s.signed(m, 'GET', `/api/v1/payment-links/${l.link_id}`)).body, l);
      const share = await viewer.call('GET', `/portal/api/payment-links/${l.link_id}/share`);
      assert.equal(share.status, 200, share.text);
      assert.equal(share.body.url, l.url);
      assert.deepEqual(share.body.qr, qrPath(l.url), 'the one QR path builder');
      assert.ok(share.body.qr.size >= 29 && /^M\d+ \d+h1v1h-1z/.test(share.body.qr.path));

      const open = await s.request('POST', `/quickpay/v1/links/${l.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER, memo: 'Invoice 2026-117' } });
      assert.equal(open.status, 200, open.text);
      const sessions = await viewer.call('GET', `/portal/api/payment-links/${l.link_id}/sessions`);
      assert.equal(sessions.status, 200, sessions.text);
      assert.equal(sessions.body.data.length, 1);
      const x = sessions.body.data[0];
      assert.deepEqual([x.session_id, x.memo, x.amount, x.rail], [open.body.session_id, 'Invoice 2026-117', '4.20', 'crypto']);
      assert.match(x.order_id, /^ord_/);

      const off = await p.call('POST', `/portal/api/payment-links/${l.link_id}`, { active: false });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.body.active, false);
      const closed = await s.request('POST', `/quickpay/v1/links/${l.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER } });
      assert.ok(closed.status >= 400 && closed.status < 500, `a deactivated link opens no session: ${closed.status}`);
      // another merchant's link: not found on every link route
      const theirs = (await s.signed(other, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '5' } })).body.link_id;
      for (const path of [`/portal/api/payment-links/${theirs}/share`, `/portal/api/payment-links/${theirs}/sessions`]) {
        const r = await p.call('GET', path);
        assert.deepEqual([r.status, r.body.code], [404, 'link_not_found'], path);
      }
      const edit = await p.call('POST', `/portal/api/payment-links/${theirs}`, { active: false });
      assert.equal(edit.status, 404, edit.text);
      assert.equal((await s.signed(other, 'GET', `/api/v1/payment-links/${theirs}`)).body.active, true, 'untouched');
    });

    test('a new API key is in the list at once', async () => {
      const k = await p.call('POST', '/portal/api/api-keys');
      assert.equal(k.status, 201, k.text);
      const list = await p.call('GET', '/portal/api/api-keys');
      assert.ok(list.body.api_keys.some((x: any) => x.api_key === k.body.api_key && !x.revoked_at));
    });
  });
}
