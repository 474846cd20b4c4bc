// TollgateClient.createCheckoutSession against a running Tollgate: real HTTP, real database (PGlite,
// and Postgres when TEST_DATABASE_URL is set). Checks that the camelCase parameters reach the server
// as the documented wire fields (comma-joined rails, JSON serialized once) and that the server's
// refusals come back as typed errors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../../../apps/server/test/helpers/db.ts';
import { PAYER, setupMerchant } from '../../../apps/server/test/helpers/orders.ts';
import type { Creds, TestServer } from '../../../apps/server/test/helpers/server.ts';
import { startCheckoutServer } from '../../../apps/server/test/integration/checkout-fixtures.ts';
import { TollgateApiError, TollgateClient } from '../src/index.ts';

async function rejection(p: Promise<unknown>): Promise<TollgateApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TollgateApiError, `expected TollgateApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

for (const backend of backends()) {
  describe(`TollgateClient.createCheckoutSession against a running Tollgate (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let client: TollgateClient;

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s);
      await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { return_urls: ['https://shop.example/checkout'] });
      await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: true });
      client = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(() => s.close());

    it('sends every camelCase parameter as its wire field; the session holds exactly those terms', async () => {
      const session = await client.createCheckoutSession({
        checkoutType: 'DIRECT',
        paymentRails: ['crypto', 'fiat'],
        price: '19.98',
        fiatCurrency: 'EUR',
        fiatAmount: '18.50',
        clientReferenceId: '  sdk-cart-1  ',
        expiresIn: 900,
        lineItems: [{ name: 'Mug', quantity: 2, amount: '9.99' }],
        publicMetadata: { campaign: 'sdk', count: 2 },
        privateMetadata: { crm_id: 'C-1' },
        successUrl: 'https://shop.example/checkout/ok',
        cancelUrl: 'https://shop.example/checkout/cancel',
      });
      assert.match(session.checkout_id, /^cs_/);
      assert.equal(session.checkout_type, 'DIRECT');
      assert.equal(session.url, `http://127.0.0.1:8402/checkout/pay#${session.checkout_id}`);
      assert.equal(session.expires_at, Math.floor(s.clock.now() / 1000) + 900);

      const row = (await s.db.query<any>('SELECT * FROM checkout_sessions WHERE id = $1', [session.checkout_id])).rows[0];
      assert.equal(row.merchant_id, m.merchantId);
      assert.deepEqual(row.payment_rails, ['crypto', 'fiat']);
      assert.deepEqual([row.price, row.fiat_currency, row.fiat_amount, row.client_reference_id], ['19.98', 'EUR', '18.50', 'sdk-cart-1']);
      assert.deepEqual(row.line_items, [{ name: 'Mug', quantity: 2, amount: '9.99' }]);
      assert.deepEqual(row.public_metadata, { campaign: 'sdk', count: 2 });
      assert.deepEqual(row.private_metadata, { crm_id: 'C-1' });
      assert.deepEqual([row.success_url, row.cancel_url], ['https://shop.example/checkout/ok', 'https://shop.example/checkout/cancel']);

      // The browser side: the public view and a bind work on the id the SDK returned.
      const view = await (await fetch(`${s.url}/checkout/v1/sessions/${session.checkout_id}`)).json();
      assert.deepEqual([view.status, view.price, view.payment_rails, view.public_metadata], ['OPEN', '19.98', ['crypto', 'fiat'], { campaign: 'sdk', count: 2 }]);
      const bind = await fetch(`${s.url}/checkout/v1/sessions/${session.checkout_id}/bind`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chain_id: 31337, token_symbol: 'USDC', from_address: PAYER }),
      });
      assert.equal(bind.status, 200);
      assert.equal((await bind.json()).amount_wei, '19980000');
    });

    it('defaults: checkoutType DIRECT and the crypto rail', async () => {
      const session = await client.createCheckoutSession({ price: '1.00' });
      assert.equal(session.checkout_type, 'DIRECT');
      const row = (await s.db.query<any>('SELECT payment_rails, expires_at FROM checkout_sessions WHERE id = $1', [session.checkout_id])).rows[0];
      assert.deepEqual(row.payment_rails, ['crypto']);
      assert.equal(session.expires_at, Math.floor(s.clock.now() / 1000) + 3600);
    });

    it('a reused clientReferenceId is a 409 TollgateApiError, not a replay of the original', async () => {
      await client.createCheckoutSession({ price: '2.00', clientReferenceId: 'sdk-dup' });
      const err = await rejection(client.createCheckoutSession({ price: '2.00', clientReferenceId: 'sdk-dup' }));
      assert.deepEqual([err.status, err.code, err.param], [409, 'client_reference_id_conflict', 'client_reference_id']);
      assert.match(err.requestId ?? '', /^req_/);
    });

    it('server-side rule violations come back with code and param', async () => {
      const cases: [Parameters<TollgateClient['createCheckoutSession']>[0], string, string][] = [
        [{ price: '1.00', successUrl: 'https://evil.example/checkout' }, 'return_url_not_allowed', 'success_url'],
        [{ price: '1.0000001' }, 'invalid_amount', 'price'],
        [{ price: '5.00', lineItems: [{ name: 'Mug', quantity: 1, amount: '4.00' }] }, 'invalid_amount', 'line_items_json'],
        [{ price: '1.00', publicMetadata: { tollgate_source: 'x' } }, 'invalid_request', 'public_metadata_json'],
        [{ paymentRails: ['fiat'], fiatCurrency: 'USD', fiatAmount: '1.005' }, 'invalid_amount', 'fiat_amount'],
      ];
      for (const [params, code, param] of cases) {
        const err = await rejection(client.createCheckoutSession(params));
        assert.deepEqual([err.status, err.code, err.param], [400, code, param], JSON.stringify(params));
      }
    });
  });
}
