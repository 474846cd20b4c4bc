import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isId } from '@tollgate/protocol';
import { backends } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { buildSessionBody, countRows, createSession, RETURN_BASE, startCheckoutServer } from './checkout-fixtures.ts';

/** `POST /api/v1/checkout/sessions` field rules through real HTTP, and the two admin routes it relies on. */
for (const backend of backends()) {
  describe(`checkout session creation (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let card: Creds;
    const nowS = () => Math.floor(s.clock.now() / 1000);

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s);
      card = await setupMerchant(s, { name: 'Card Merchant' });
      for (const c of [m, card]) {
        const r = await s.admin('PUT', `/admin/v1/merchants/${c.merchantId}/return-urls`, { return_urls: [RETURN_BASE, 'https://shop.example:8443/'] });
        assert.equal(r.status, 200, r.text);
      }
      assert.equal((await s.admin('POST', `/admin/v1/merchants/${card.merchantId}/card-rail`, { enabled: true })).status, 200);
    });
    after(() => s.close());

    it('creates a session: 200 with exactly checkout_id, checkout_type, url, expires_at', async () => {
      const r = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody({ success_url: `${RETURN_BASE}/ok?x=1`, cancel_url: 'https://shop.example:8443/cart' }) });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ['checkout_id', 'checkout_type', 'expires_at', 'url']);
      const id = r.body.checkout_id as string;
      assert.ok(isId('cs', id), 'cs_ + 24 random bytes');
      assert.equal(r.body.checkout_type, 'DIRECT');
      assert.equal(r.body.url, `http://127.0.0.1:8402/checkout/pay#${id}`);
      assert.equal(new URL(r.body.url).hash, `#${id}`, 'the capability is in the fragment, never in the path or query');
      assert.equal(r.body.expires_at, nowS() + 3600);
      const row = (await s.db.query<any>('SELECT * FROM checkout_sessions WHERE id = $1', [id])).rows[0];
      assert.equal(row.merchant_id, m.merchantId);
      assert.equal(row.status, 'OPEN');
      assert.deepEqual(row.payment_rails, ['crypto']);
      assert.equal(row.price, '9.99');
      assert.deepEqual(row.line_items, [
        { name: 'Tee', quantity: 1, amount: '7.99' },
        { name: 'Sticker', quantity: 2, amount: '1' },
      ]);
      assert.deepEqual(row.private_metadata, { internal_customer: 'PRIVATE-SENTINEL-customer-42' });
      // one option per merchant wallet, price in the token's smallest unit
      assert.deepEqual(
        row.payment_options.map((o: any) => [o.chain_id, o.token_symbol, o.decimals, o.amount_wei]),
        [
          [31337, 'USDC', 6, '9990000'],
          [31337, 'USDT', 6, '9990000'],
        ],
      );
      assert.equal(row.order_id, null);
      const audit = (await s.db.query<any>('SELECT from_status, to_status, trigger FROM checkout_transitions WHERE checkout_id = $1', [id])).rows;
      assert.deepEqual(audit, [{ from_status: null, to_status: 'OPEN', trigger: 'create' }]);
    });

    it('takes the merchant from the API key; a body merchant_id is accepted and ignored', async () => {
      const other = await s.createMerchant({ name: 'Someone else' });
      const { checkout_id } = await createSession(s, m, { merchant_id: other.merchantId });
      const row = (await s.db.query<any>('SELECT merchant_id FROM checkout_sessions WHERE id = $1', [checkout_id])).rows[0];
      assert.equal(row.merchant_id, m.merchantId);
    });

    it('clamps expires_in into [300, 86400]; the returned expires_at is authoritative', async () => {
      for (const [asked, got] of [
        [1, 300],
        [299, 300],
        [300, 300],
        [7200, 7200],
        [86_400, 86_400],
        [10_000_000, 86_400],
        [-60, 300],
      ] as const) {
        const r = await createSession(s, m, { expires_in: asked });
        assert.equal(r.expires_at, nowS() + got, `expires_in ${asked}`);
      }
    });

    it('accepts fiat for a merchant with the card rail (card-only and crypto+fiat)', async () => {
      const both = await s.signed(card, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody({ payment_rails: 'crypto,fiat', fiat_currency: 'EUR', fiat_amount: '9.50' }) });
      assert.equal(both.status, 200, both.text);
      const only = await s.signed(card, 'POST', '/api/v1/checkout/sessions', {
        body: buildSessionBody({ payment_rails: 'fiat', price: undefined, fiat_currency: 'JPY', fiat_amount: '1500', line_items_json: undefined }),
      });
      assert.equal(only.status, 200, only.text);
      const row = (await s.db.query<any>('SELECT payment_rails, price, fiat_currency, fiat_amount, payment_options FROM checkout_sessions WHERE id = $1', [only.body.checkout_id])).rows[0];
      assert.deepEqual(row, { payment_rails: ['fiat'], price: null, fiat_currency: 'JPY', fiat_amount: '1500', payment_options: [] });
    });

    // Every field rule, through HTTP: status, code and param, and nothing written.
    const refusals: [string, Record<string, unknown>, number, string, string, 'card'?][] = [
      ['missing checkout_type', { checkout_type: undefined }, 400, 'invalid_request', 'checkout_type'],
      ['checkout_type DELEGATE', { checkout_type: 'DELEGATE' }, 400, 'delegate_checkout_unsupported', 'checkout_type'],
      ['payment_rails as a JSON array', { payment_rails: ['crypto'] }, 400, 'invalid_request', 'payment_rails'],
      ['an unknown rail', { payment_rails: 'crypto,bank' }, 400, 'invalid_request', 'payment_rails'],
      ['a duplicated rail', { payment_rails: 'crypto,crypto' }, 400, 'invalid_request', 'payment_rails'],
      ['fiat without the card rail', { payment_rails: 'crypto,fiat', fiat_currency: 'USD', fiat_amount: '1.00' }, 400, 'rail_not_enabled', 'payment_rails'],
      ['crypto without price', { price: undefined }, 400, 'invalid_amount', 'price'],
      ['price as a JSON number', { price: 9.99 }, 400, 'invalid_request', 'price'],
      ['a zero price', { price: '0.00', line_items_json: undefined }, 400, 'invalid_amount', 'price'],
      ['a price with 7 fraction digits (tokens have 6)', { price: '1.0000001', line_items_json: undefined }, 400, 'invalid_amount', 'price'],
      ['a price in exponent form', { price: '1e2', line_items_json: undefined }, 400, 'invalid_amount', 'price'],
      ['price on a card-only session', { payment_rails: 'fiat', fiat_currency: 'USD', fiat_amount: '1', line_items_json: undefined }, 400, 'invalid_request', 'price', 'card'],
      ['fiat without fiat_currency', { payment_rails: 'crypto,fiat', fiat_amount: '1.00' }, 400, 'invalid_request', 'fiat_currency', 'card'],
      ['an unsupported fiat_currency', { payment_rails: 'crypto,fiat', fiat_currency: 'XAU', fiat_amount: '1.00' }, 400, 'invalid_request', 'fiat_currency', 'card'],
      ['fiat without fiat_amount', { payment_rails: 'crypto,fiat', fiat_currency: 'USD' }, 400, 'invalid_amount', 'fiat_amount', 'card'],
      ['a fiat_amount finer than the minor unit', { payment_rails: 'crypto,fiat', fiat_currency: 'USD', fiat_amount: '1.001' }, 400, 'invalid_amount', 'fiat_amount', 'card'],
      ['fiat_currency without the fiat rail', { fiat_currency: 'USD' }, 400, 'invalid_request', 'fiat_currency', 'card'],
      ['fiat_amount without the fiat rail', { fiat_amount: '1.00' }, 400, 'invalid_request', 'fiat_amount', 'card'],
      ['a client_reference_id of 201 characters', { client_reference_id: 'r'.repeat(201) }, 400, 'invalid_request', 'client_reference_id'],
      ['expires_in as a string', { expires_in: '3600' }, 400, 'invalid_request', 'expires_in'],
      ['expires_in with a fraction', { expires_in: 600.5 }, 400, 'invalid_request', 'expires_in'],
      ['line items as a nested array', { line_items_json: [{ name: 'a', quantity: 1 }] }, 400, 'invalid_request', 'line_items_json'],
      ['line items that are not JSON', { line_items_json: 'not json' }, 400, 'invalid_request', 'line_items_json'],
      ['a line item without quantity', { line_items_json: '[{"name":"a"}]' }, 400, 'invalid_request', 'line_items_json'],
      ['a line item name of 201 characters', { line_items_json: JSON.stringify([{ name: 'n'.repeat(201), quantity: 1 }]) }, 400, 'invalid_request', 'line_items_json'],
      ['101 line items', { line_items_json: JSON.stringify(Array.from({ length: 101 }, () => ({ name: 'a', quantity: 1 }))) }, 400, 'invalid_request', 'line_items_json'],
      ['line items not adding up to price (per-unit amounts)', { line_items_json: JSON.stringify([{ name: 'Tee', quantity: 2, amount: '9.99' }]) }, 400, 'invalid_amount', 'line_items_json'],
      ['public metadata as an object instead of a string', { public_metadata_json: { a: 1 } }, 400, 'invalid_request', 'public_metadata_json'],
      ['public metadata that is an array', { public_metadata_json: '[]' }, 400, 'invalid_request', 'public_metadata_json'],
      ['a reserved public metadata key', { public_metadata_json: '{"tollgate.source":"x"}' }, 400, 'invalid_request', 'public_metadata_json'],
      ['51 private metadata keys', { private_metadata_json: JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]))) }, 400, 'invalid_request', 'private_metadata_json'],
      ['a private metadata key of 41 characters', { private_metadata_json: JSON.stringify({ ['k'.repeat(41)]: 1 }) }, 400, 'invalid_request', 'private_metadata_json'],
      ['a private metadata value of 501 characters', { private_metadata_json: JSON.stringify({ note: 'x'.repeat(501) }) }, 400, 'invalid_request', 'private_metadata_json'],
      ['nested private metadata', { private_metadata_json: '{"a":{"b":1}}' }, 400, 'invalid_request', 'private_metadata_json'],
      ['a success_url on another origin', { success_url: 'https://evil.example/checkout/done' }, 400, 'return_url_not_allowed', 'success_url'],
      ['a success_url outside the allowlisted path', { success_url: 'https://shop.example/admin' }, 400, 'return_url_not_allowed', 'success_url'],
      ['a cancel_url sharing only a string prefix', { cancel_url: `${RETURN_BASE}-evil` }, 400, 'return_url_not_allowed', 'cancel_url'],
      ['a cancel_url that is not a URL', { cancel_url: '/relative' }, 400, 'invalid_request', 'cancel_url'],
      ['an unknown field', { colour: 'blue' }, 400, 'invalid_request', 'colour'],
    ];
    for (const [name, override, status, code, param, who] of refusals) {
      it(`refuses ${name} (${status} ${code}, param ${param}) and writes nothing`, async () => {
        const before = [await countRows(s, 'checkout_sessions'), await countRows(s, 'checkout_transitions')];
        const r = await s.signed(who === 'card' ? card : m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody(override) });
        assert.equal(r.status, status, r.text);
        assert.equal(r.body.code, code, r.text);
        assert.equal(r.body.param, param, r.text);
        assert.match(r.body.request_id, /^req_/);
        assert.deepEqual([await countRows(s, 'checkout_sessions'), await countRows(s, 'checkout_transitions')], before);
      });
    }

    it('refuses a reused client_reference_id with 409 and does not return the original session', async () => {
      const body = buildSessionBody({ client_reference_id: 'order-2024-0001' });
      const first = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body });
      assert.equal(first.status, 200, first.text);
      const n = await countRows(s, 'checkout_sessions');
      for (const ref of ['order-2024-0001', '  order-2024-0001 ']) {
        const again = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { ...body, client_reference_id: ref, price: '1.00', line_items_json: undefined } });
        assert.equal(again.status, 409, again.text);
        assert.equal(again.body.code, 'client_reference_id_conflict');
        assert.equal(again.body.param, 'client_reference_id');
        assert.equal(again.text.includes(first.body.checkout_id), false, 'the original session id is not disclosed');
        assert.equal(again.body.checkout_id, undefined);
      }
      assert.equal(await countRows(s, 'checkout_sessions'), n);
      // another merchant may use the same reference; blank references never collide
      assert.equal((await s.signed(card, 'POST', '/api/v1/checkout/sessions', { body: { ...body } })).status, 200);
      for (let i = 0; i < 2; i++) assert.equal((await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody({ client_reference_id: '   ' }) })).status, 200);
      for (let i = 0; i < 2; i++) assert.equal((await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody({ client_reference_id: undefined }) })).status, 200);
    });

    it('two concurrent creates with one client_reference_id: exactly one 200, one 409', async () => {
      const body = buildSessionBody({ client_reference_id: `race-${Date.now()}` });
      const rs = await Promise.all([0, 1].map(() => s.signed(m, 'POST', '/api/v1/checkout/sessions', { body })));
      assert.deepEqual(rs.map((r) => r.status).sort(), [200, 409]);
    });

    it('refuses crypto for a merchant with no wallet', async () => {
      const bare = await s.createMerchant({ name: 'No wallets' });
      const r = await s.signed(bare, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody() });
      assert.equal(r.status, 400);
      assert.deepEqual([r.body.code, r.body.param], ['wallet_not_found', 'payment_rails']);
    });
  });

  describe(`checkout admin routes (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s);
    });
    after(() => s.close());

    it('card-rail toggles fiat in the public merchant configuration and in session creation', async () => {
      const fiatBody = () => buildSessionBody({ payment_rails: 'fiat', price: undefined, line_items_json: undefined, fiat_currency: 'USD', fiat_amount: '5.00' });
      assert.deepEqual((await s.request('GET', `/merchants/${m.merchantId}`)).body.payment_methods, ['crypto']);
      assert.equal((await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: fiatBody() })).body.code, 'rail_not_enabled');
      const on = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: true });
      assert.deepEqual([on.status, on.body], [200, { merchant_id: m.merchantId, card_enabled: true }]);
      assert.deepEqual((await s.request('GET', `/merchants/${m.merchantId}`)).body.payment_methods, ['crypto', 'fiat']);
      assert.equal((await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: fiatBody() })).status, 200);
      const off = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: false });
      assert.equal(off.body.card_enabled, false);
      assert.equal((await s.admin('GET', `/admin/v1/merchants/${m.merchantId}`)).body.card_enabled, false);
    });

    it('return-urls replaces the allowlist (deduplicated) and validates each entry', async () => {
      const r = await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { return_urls: ['https://a.example/done', 'https://a.example/done', 'http://localhost:3000/'] });
      assert.deepEqual([r.status, r.body.return_urls], [200, ['https://a.example/done', 'http://localhost:3000/']]);
      assert.deepEqual((await s.admin('GET', `/admin/v1/merchants/${m.merchantId}`)).body.return_urls, ['https://a.example/done', 'http://localhost:3000/']);
      assert.equal((await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody({ success_url: 'https://a.example/done/7' }) })).status, 200);
      for (const bad of ['ftp://a.example/', 'not a url', 'https://u:p@a.example/', 'https://a.example/done?x=1', 'https://a.example/#frag']) {
        const x = await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { return_urls: [bad] });
        assert.deepEqual([x.status, x.body.code, x.body.param], [400, 'invalid_request', 'return_urls'], bad);
      }
      const many = await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { return_urls: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) });
      assert.equal(many.status, 400);
      const cleared = await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { return_urls: [] });
      assert.deepEqual(cleared.body.return_urls, []);
      const refused = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody({ success_url: 'https://a.example/done/7' }) });
      assert.equal(refused.body.code, 'return_url_not_allowed');
    });

    it('both need the admin token and an existing merchant', async () => {
      assert.equal((await s.request('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { body: { enabled: true } })).status, 401);
      assert.equal((await s.request('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { body: { return_urls: [] } })).status, 401);
      const a = await s.admin('POST', '/admin/v1/merchants/nobody_here/card-rail', { enabled: true });
      const b = await s.admin('PUT', '/admin/v1/merchants/nobody_here/return-urls', { return_urls: [] });
      assert.deepEqual([a.status, a.body.code, b.status, b.body.code], [404, 'merchant_not_found', 404, 'merchant_not_found']);
      assert.equal((await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: 'yes' })).status, 400);
    });
  });
}
