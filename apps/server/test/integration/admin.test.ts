import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';
import { assertError, count, uniqueId, USDC, WALLET, WALLET_CHECKSUM } from './admin-fixtures.ts';

for (const backend of backends()) {
  describe(`admin API (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ backend, chains: [fakeChain()] });
    });
    after(() => server.close());

    const getMerchant = (id: string) => server.admin('GET', `/admin/v1/merchants/${id}`);

    describe('create merchant', () => {
      it('201 with a generated id, the first API key and its secret', async () => {
        const r = await server.admin('POST', '/admin/v1/merchants', { name: '  Coffee Shop  ' });
        assert.equal(r.status, 201, r.text);
        assert.deepEqual(Object.keys(r.body).sort(), ['api_key', 'api_secret', 'merchant_id', 'name', 'receive_type']);
        assert.match(r.body.merchant_id, /^mch_[A-Za-z0-9]+$/);
        assert.equal(r.body.name, 'Coffee Shop', 'name is trimmed');
        assert.equal(r.body.receive_type, 'DIRECT');
        assert.match(r.body.api_key, /^tg_test_/);
        assert.match(r.body.api_secret, /^tgsk_/);
        assert.match(r.headers.get('x-request-id') ?? '', /^req_/);
      });

      it('the secret is shown once and never again', async () => {
        const c = await server.createMerchant();
        const g = await getMerchant(c.merchantId);
        assert.equal(g.status, 200, g.text);
        assert.equal(g.text.includes(c.apiSecret), false, 'GET must not contain the secret');
        assert.equal(g.text.includes('api_secret'), false);
        assert.equal(g.text.includes('secret'), false);
        assert.deepEqual(
          g.body.api_keys.map((k: { api_key: string }) => k.api_key),
          [c.apiKey],
        );
        assert.equal(g.body.api_keys[0].revoked_at, null);
        const self = await server.signed(c, 'GET', '/api/v1/merchant');
        assert.equal(self.status, 200, self.text);
        assert.equal(self.text.includes(c.apiSecret), false);
      });

      it('the secret is stored encrypted (v1: AES-GCM), never in plaintext', async () => {
        const c = await server.createMerchant();
        const { rows } = await server.db.query<{ api_key: string; secret_ciphertext: string }>('SELECT api_key, secret_ciphertext FROM api_keys WHERE merchant_id = $1', [c.merchantId]);
        assert.equal(rows.length, 1);
        const ct = rows[0]!.secret_ciphertext;
        assert.ok(ct.startsWith('v1:'), ct);
        assert.equal(ct.includes(c.apiSecret), false);
        assert.equal(ct.includes(c.apiSecret.slice('tgsk_'.length)), false);
        assert.equal(ct.includes(Buffer.from(c.apiSecret).toString('base64')), false);
        assert.equal(ct.split(':').length, 4);
      });

      it('201 with a supplied merchant_id and all optional fields', async () => {
        const id = uniqueId('shop');
        const r = await server.admin('POST', '/admin/v1/merchants', {
          name: 'Shop',
          merchant_id: id,
          receive_type: 'DELEGATE',
          logo_url: 'https://cdn.example.com/logo.png',
          return_urls: ['https://shop.example.com/done'],
        });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.body.merchant_id, id);
        assert.equal(r.body.receive_type, 'DELEGATE');
        const g = await getMerchant(id);
        assert.equal(g.status, 200, g.text);
        assert.equal(g.body.merchant_id, id);
        assert.equal(g.body.name, 'Shop');
        assert.equal(g.body.receive_type, 'DELEGATE');
        assert.equal(g.body.logo_url, 'https://cdn.example.com/logo.png');
        assert.deepEqual(g.body.return_urls, ['https://shop.example.com/done']);
        assert.equal(g.body.card_enabled, false);
        assert.ok(!Number.isNaN(Date.parse(g.body.created_at)));
        assert.deepEqual(g.body.wallets, []);
        assert.deepEqual(g.body.fee_balance, { available: '0.00', reserved: '0.00', captured: '0.00' });
      });

      it('a duplicate merchant_id is 409 merchant_already_exists and changes nothing', async () => {
        const id = uniqueId('dup');
        const first = await server.admin('POST', '/admin/v1/merchants', { name: 'First', merchant_id: id });
        assert.equal(first.status, 201, first.text);
        const keysBefore = await count(server, 'api_keys');
        const r = await server.admin('POST', '/admin/v1/merchants', { name: 'Second', merchant_id: id });
        assertError(r, 409, 'merchant_already_exists', 'merchant_id');
        assert.equal(await count(server, 'api_keys'), keysBefore, 'no key for the duplicate');
        const g = await getMerchant(id);
        assert.equal(g.body.name, 'First');
        assert.equal(g.body.api_keys.length, 1);
      });

      const badBodies: [string, unknown, string][] = [
        ['missing name', { merchant_id: 'no_name_1' }, 'name'],
        ['empty name', { name: '' }, 'name'],
        ['name not a string', { name: 42 }, 'name'],
        ['unknown field', { name: 'X', colour: 'blue' }, 'colour'],
        ['bad receive_type', { name: 'X', receive_type: 'INDIRECT' }, 'receive_type'],
        ['lowercase receive_type', { name: 'X', receive_type: 'direct' }, 'receive_type'],
        ['non-http logo_url', { name: 'X', logo_url: 'javascript:alert(1)' }, 'logo_url'],
        ['ftp logo_url', { name: 'X', logo_url: 'ftp://example.com/logo.png' }, 'logo_url'],
        ['merchant_id too short', { name: 'X', merchant_id: 'ab' }, 'merchant_id'],
        ['merchant_id with a slash', { name: 'X', merchant_id: 'a/b/c' }, 'merchant_id'],
        ['return_urls not URLs', { name: 'X', return_urls: ['not a url'] }, 'return_urls.0'],
      ];
      for (const [label, body, param] of badBodies) {
        it(`400 invalid_request for ${label} (param ${param}), nothing written`, async () => {
          const before = await count(server, 'merchants');
          const keysBefore = await count(server, 'api_keys');
          const r = await server.admin('POST', '/admin/v1/merchants', body);
          assertError(r, 400, 'invalid_request', param);
          assert.equal(await count(server, 'merchants'), before);
          assert.equal(await count(server, 'api_keys'), keysBefore);
        });
      }

      it('a body that is not an object is 400, nothing written', async () => {
        const before = await count(server, 'merchants');
        for (const body of [[], 'name', 7, null]) {
          const r = await server.request('POST', '/admin/v1/merchants', {
            rawBody: JSON.stringify(body),
            headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
          });
          assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
          assert.ok(['invalid_request', 'invalid_json'].includes(r.body.code), r.text);
        }
        assert.equal(await count(server, 'merchants'), before);
      });
    });

    describe('admin authentication', () => {
      const attempts: [string, Record<string, string>][] = [
        ['no Authorization header', {}],
        ['a wrong token', { authorization: 'Bearer not-the-admin-token-at-all' }],
        ['a token prefix', { authorization: `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}` }],
        ['the token with a suffix', { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` }],
        ['another scheme', { authorization: `Basic ${TEST_ADMIN_TOKEN}` }],
        ['the bare token', { authorization: TEST_ADMIN_TOKEN }],
        ['an empty bearer', { authorization: 'Bearer ' }],
      ];
      for (const [label, headers] of attempts) {
        it(`401 unauthorized with ${label}, nothing written`, async () => {
          const before = await count(server, 'merchants');
          const r = await server.request('POST', '/admin/v1/merchants', { body: { name: 'Nope' }, headers });
          assertError(r, 401, 'unauthorized');
          assert.equal(await count(server, 'merchants'), before);
        });
      }

      it('401 on every admin route, before validation', async () => {
        const c = await server.createMerchant();
        const routes: [string, string, unknown][] = [
          ['GET', `/admin/v1/merchants/${c.merchantId}`, undefined],
          ['POST', `/admin/v1/merchants/${c.merchantId}/wallets`, { bogus: true }],
          ['POST', `/admin/v1/merchants/${c.merchantId}/fee-balance/top-ups`, { amount: 'x' }],
          ['POST', `/admin/v1/merchants/${c.merchantId}/api-keys`, undefined],
          ['DELETE', `/admin/v1/merchants/${c.merchantId}/api-keys/${c.apiKey}`, undefined],
        ];
        for (const [method, path, body] of routes) {
          const r = await server.request(method, path, { body, headers: { authorization: 'Bearer wrong-token-wrong-token' } });
          assertError(r, 401, 'unauthorized');
        }
        const self = await server.signed(c, 'GET', '/api/v1/merchant');
        assert.equal(self.status, 200, 'the key was not revoked by the refused DELETE');
      });

      it('the auth scheme is case-insensitive (RFC 9110 §11.1)', async () => {
        const r = await server.request('GET', '/admin/v1/merchants/nobody_here', { headers: { authorization: `bearer ${TEST_ADMIN_TOKEN}` } });
        assertError(r, 404, 'merchant_not_found');
      });

      it('a merchant API key is not an admin token', async () => {
        const c = await server.createMerchant();
        const r = await server.request('GET', `/admin/v1/merchants/${c.merchantId}`, { headers: { authorization: `Bearer ${c.apiSecret}` } });
        assertError(r, 401, 'unauthorized');
      });
    });

    describe('merchant lookup', () => {
      it('GET of an unknown merchant is 404 merchant_not_found', async () => {
        assertError(await getMerchant('does_not_exist'), 404, 'merchant_not_found', 'merchant_id');
      });
    });

    describe('public merchant view', () => {
      it("returns exactly the public fields (docs/migrating.md), plus the additive supported_tokens GOAT's Go SDK reads", async () => {
        const m = await server.createMerchant({ body: { return_urls: ['https://shop.example.com/ok'] } });
        await server.admin('POST', `/admin/v1/merchants/${m.merchantId}/fee-balance/top-ups`, { amount: '5.00' });
        await server.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: WALLET_CHECKSUM });
        const r = await server.request('GET', `/merchants/${m.merchantId}`);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, {
          merchant_id: m.merchantId,
          name: 'Test Merchant',
          receive_type: 'DIRECT',
          payment_methods: ['crypto'],
          wallets: [{ chain_id: 31337, token_symbol: 'USDC', token_contract: USDC.address, decimals: 6, address: WALLET }],
          // GOAT Network's Go SDK reads the accepted tokens under this name (docs/migrating.md).
          supported_tokens: [{ chain_id: 31337, symbol: 'USDC', token_contract: USDC.address, decimals: 6 }],
        });
        for (const leak of ['fee_balance', 'return_urls', 'api_key', m.apiKey, m.apiSecret, 'shop.example.com', 'card_enabled', 'created_at']) {
          assert.equal(r.text.includes(leak), false, `public view leaks ${leak}`);
        }
      });

      it("includes logo_url (and GOAT's logo) only when set", async () => {
        const m = await server.createMerchant({ body: { logo_url: 'https://cdn.example.com/l.png' } });
        const r = await server.request('GET', `/merchants/${m.merchantId}`);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(Object.keys(r.body).sort(), ['logo', 'logo_url', 'merchant_id', 'name', 'payment_methods', 'receive_type', 'supported_tokens', 'wallets']);
        assert.equal(r.body.logo_url, 'https://cdn.example.com/l.png');
        assert.equal(r.body.logo, r.body.logo_url, "the same URL under the name GOAT's SDKs read");
        const none = await server.request('GET', `/merchants/${(await server.createMerchant()).merchantId}`);
        assert.equal('logo' in none.body || 'logo_url' in none.body, false, 'neither name without a logo');
      });

      it('needs no credentials, and an admin token changes nothing', async () => {
        const m = await server.createMerchant();
        const anon = await server.request('GET', `/merchants/${m.merchantId}`);
        const admin = await server.admin('GET', `/merchants/${m.merchantId}`);
        assert.equal(anon.status, 200);
        assert.deepEqual(admin.body, anon.body);
      });

      it('an unknown merchant is 404 merchant_not_found', async () => {
        assertError(await server.request('GET', '/merchants/nobody_here'), 404, 'merchant_not_found', 'merchant_id');
      });
    });
  });

  describe(`admin API disabled (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ backend, chains: [fakeChain()], config: { adminToken: undefined } });
    });
    after(() => server.close());

    it('every admin route answers 403 forbidden, with or without a bearer', async () => {
      const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { authorization: 'Bearer ' }];
      for (const headers of attempts) {
        const r = await server.request('POST', '/admin/v1/merchants', { body: { name: 'X' }, headers });
        assertError(r, 403, 'forbidden');
        const g = await server.request('GET', '/admin/v1/merchants/anyone', { headers });
        assertError(g, 403, 'forbidden');
      }
      assert.equal(await count(server, 'merchants'), 0);
    });

    it('public routes still work', async () => {
      assertError(await server.request('GET', '/merchants/nobody_here'), 404, 'merchant_not_found');
    });
  });
}
