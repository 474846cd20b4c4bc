import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type Creds, type TestResponse, type TestServer } from '../helpers/server.ts';

const USDC = fakeChain().tokens[0]!;
const WALLET_CHECKSUM = '0x8626f6940E2eb28930eFb4CeF49B2d1F2C9C1199';
const WALLET = WALLET_CHECKSUM.toLowerCase();

/** A unique merchant id per test (the server is shared within a backend). */
function uniqueId(prefix = 'm'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Asserts an error envelope: status, code, optional param, request id matching the header. */
function assertError(r: TestResponse, status: number, code: string, param?: string) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.code, code, r.text);
  assert.equal(typeof r.body.error, 'string');
  assert.ok(r.body.error.length > 0);
  assert.match(r.body.request_id, /^req_/);
  assert.equal(r.headers.get('x-request-id'), r.body.request_id);
  if (param !== undefined) assert.equal(r.body.param, param, r.text);
  const allowed = new Set(['error', 'code', 'param', 'request_id']);
  for (const k of Object.keys(r.body)) assert.ok(allowed.has(k), `unexpected envelope field ${k}`);
}

async function count(server: TestServer, table: string): Promise<number> {
  const { rows } = await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}

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
        const { rows } = await server.db.query<{ api_key: string; secret_ciphertext: string }>(
          'SELECT api_key, secret_ciphertext FROM api_keys WHERE merchant_id = $1',
          [c.merchantId],
        );
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

    describe('wallets', () => {
      let m: Creds;
      before(async () => {
        m = await server.createMerchant();
      });
      const addWallet = (id: string, body: unknown) => server.admin('POST', `/admin/v1/merchants/${id}/wallets`, body);

      it('201: address lowercased, token contract and decimals from config', async () => {
        const r = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'USDC', address: WALLET_CHECKSUM });
        assert.equal(r.status, 201, r.text);
        assert.deepEqual(r.body, { chain_id: 31337, token_symbol: 'USDC', token_contract: USDC.address, decimals: 6, address: WALLET });
        const g = await getMerchant(m.merchantId);
        assert.deepEqual(g.body.wallets, [r.body]);
        const { rows } = await server.db.query<{ address: string }>('SELECT address FROM merchant_wallets WHERE merchant_id = $1', [m.merchantId]);
        assert.deepEqual(rows, [{ address: WALLET }]);
      });

      it('adding again replaces the address of that (chain, token)', async () => {
        const other = '0x' + 'ab'.repeat(20);
        const r = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'USDC', address: other });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.body.address, other);
        const t = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'USDT', address: WALLET });
        assert.equal(t.status, 201, t.text);
        const g = await getMerchant(m.merchantId);
        assert.deepEqual(
          g.body.wallets.map((w: { token_symbol: string; address: string }) => [w.token_symbol, w.address]),
          [
            ['USDC', other],
            ['USDT', WALLET],
          ],
        );
      });

      it('an unknown chain is 400 chain_not_supported', async () => {
        const r = await addWallet(m.merchantId, { chain_id: 1, token_symbol: 'USDC', address: WALLET });
        assertError(r, 400, 'chain_not_supported', 'chain_id');
      });

      it('an unknown token is 400 token_not_supported', async () => {
        const r = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'DAI', address: WALLET });
        assertError(r, 400, 'token_not_supported', 'token_symbol');
        const lower = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'usdc', address: WALLET });
        assertError(lower, 400, 'token_not_supported', 'token_symbol');
      });

      const badAddresses = ['0x1234', WALLET.slice(2), `${WALLET}00`, '0x' + 'g'.repeat(40), '', 12345];
      for (const address of badAddresses) {
        it(`a bad address ${JSON.stringify(address)} is 400 invalid_request (address)`, async () => {
          const r = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'USDC', address });
          assertError(r, 400, 'invalid_request', 'address');
        });
      }

      it('the zero address is 400 invalid_request (address)', async () => {
        const before = await count(server, 'merchant_wallets');
        const r = await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'USDC', address: '0x' + '0'.repeat(40) });
        assertError(r, 400, 'invalid_request', 'address');
        assert.equal(await count(server, 'merchant_wallets'), before);
      });

      it('missing or unknown fields are 400 invalid_request', async () => {
        assertError(await addWallet(m.merchantId, { token_symbol: 'USDC', address: WALLET }), 400, 'invalid_request', 'chain_id');
        assertError(await addWallet(m.merchantId, { chain_id: '31337', token_symbol: 'USDC', address: WALLET }), 400, 'invalid_request', 'chain_id');
        assertError(await addWallet(m.merchantId, { chain_id: 31337, token_symbol: 'USDC', address: WALLET, memo: 'x' }), 400, 'invalid_request', 'memo');
      });

      it('an unknown merchant is 404 merchant_not_found and writes nothing', async () => {
        const before = await count(server, 'merchant_wallets');
        const r = await addWallet('nobody_here', { chain_id: 31337, token_symbol: 'USDC', address: WALLET });
        assertError(r, 404, 'merchant_not_found', 'merchant_id');
        assert.equal(await count(server, 'merchant_wallets'), before);
      });
    });

    describe('fee balance top-ups', () => {
      const topUp = (id: string, amount: unknown) => server.admin('POST', `/admin/v1/merchants/${id}/fee-balance/top-ups`, { amount });

      it('"10.00" then "0.5" gives available "10.50"', async () => {
        const m = await server.createMerchant();
        const a = await topUp(m.merchantId, '10.00');
        assert.equal(a.status, 200, a.text);
        assert.deepEqual(a.body, { available: '10.00', reserved: '0.00', captured: '0.00' });
        const b = await topUp(m.merchantId, '0.5');
        assert.equal(b.status, 200, b.text);
        assert.deepEqual(b.body, { available: '10.50', reserved: '0.00', captured: '0.00' });
        const g = await getMerchant(m.merchantId);
        assert.deepEqual(g.body.fee_balance, { available: '10.50', reserved: '0.00', captured: '0.00' });
        const { rows } = await server.db.query<{ available: string }>('SELECT available FROM fee_accounts WHERE merchant_id = $1', [m.merchantId]);
        assert.equal(rows[0]!.available, '10500000', 'micro-units in SQL');
      });

      it('accepts 6 fraction digits', async () => {
        const m = await server.createMerchant();
        const r = await topUp(m.merchantId, '0.000001');
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.available, '0.000001');
      });

      for (const amount of ['0', '0.00', '-1', '1e3', '0.0000001', 1.5, 10, '', ' 1', '1.', '.5', '1,00', null]) {
        it(`${JSON.stringify(amount)} is 400 (param amount) and leaves the balance unchanged`, async () => {
          const m = await server.createMerchant({ topUp: '1.00' });
          const ledgerBefore = await count(server, 'fee_ledger');
          const r = await topUp(m.merchantId, amount);
          assert.equal(r.status, 400, r.text);
          assert.ok(['invalid_request', 'invalid_amount'].includes(r.body.code), r.text);
          assert.equal(r.body.param, 'amount', r.text);
          assert.match(r.body.request_id, /^req_/);
          const g = await getMerchant(m.merchantId);
          assert.deepEqual(g.body.fee_balance, { available: '1.00', reserved: '0.00', captured: '0.00' });
          assert.equal(await count(server, 'fee_ledger'), ledgerBefore);
        });
      }

      it('a missing amount or an extra field is 400 invalid_request', async () => {
        const m = await server.createMerchant();
        assertError(await server.admin('POST', `/admin/v1/merchants/${m.merchantId}/fee-balance/top-ups`, {}), 400, 'invalid_request', 'amount');
        assertError(
          await server.admin('POST', `/admin/v1/merchants/${m.merchantId}/fee-balance/top-ups`, { amount: '1', currency: 'USD' }),
          400,
          'invalid_request',
          'currency',
        );
      });

      it('an unknown merchant is 404 merchant_not_found', async () => {
        assertError(await topUp('nobody_here', '1.00'), 404, 'merchant_not_found', 'merchant_id');
      });
    });

    describe('API keys', () => {
      const createKey = (id: string) => server.admin('POST', `/admin/v1/merchants/${id}/api-keys`);
      const revokeKey = (id: string, key: string) => server.admin('DELETE', `/admin/v1/merchants/${id}/api-keys/${encodeURIComponent(key)}`);

      it('rotation: a second key, a third refused, revoke, the revoked key refused, a new key', async () => {
        const first = await server.createMerchant();

        const second = await createKey(first.merchantId);
        assert.equal(second.status, 201, second.text);
        assert.deepEqual(Object.keys(second.body).sort(), ['api_key', 'api_secret']);
        assert.notEqual(second.body.api_key, first.apiKey);
        const secondCreds: Creds = { merchantId: first.merchantId, apiKey: second.body.api_key, apiSecret: second.body.api_secret };
        assert.equal((await server.signed(secondCreds, 'GET', '/api/v1/merchant')).status, 200);

        const keysBefore = await count(server, 'api_keys');
        const third = await createKey(first.merchantId);
        assertError(third, 400, 'api_key_limit');
        assert.equal(await count(server, 'api_keys'), keysBefore);

        const revoked = await revokeKey(first.merchantId, first.apiKey);
        assert.equal(revoked.status, 200, revoked.text);
        assert.deepEqual(revoked.body, { api_key: first.apiKey, revoked: true });
        const again = await revokeKey(first.merchantId, first.apiKey);
        assert.equal(again.status, 200, 'revoking is idempotent');
        assert.deepEqual(again.body, { api_key: first.apiKey, revoked: true });

        const refused = await server.signed(first, 'GET', '/api/v1/merchant');
        assertError(refused, 401, 'api_key_revoked');
        const ok = await server.signed(secondCreds, 'GET', '/api/v1/merchant');
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.body.merchant_id, first.merchantId);

        const g = await getMerchant(first.merchantId);
        const keys = new Map<string, string | null>(g.body.api_keys.map((k: { api_key: string; revoked_at: string | null }) => [k.api_key, k.revoked_at]));
        assert.equal(keys.size, 2);
        assert.ok(keys.get(first.apiKey), 'revoked_at is set');
        assert.equal(keys.get(secondCreds.apiKey), null);

        const fresh = await createKey(first.merchantId);
        assert.equal(fresh.status, 201, fresh.text);
        const freshCreds: Creds = { merchantId: first.merchantId, apiKey: fresh.body.api_key, apiSecret: fresh.body.api_secret };
        assert.equal((await server.signed(freshCreds, 'GET', '/api/v1/merchant')).status, 200);
        assertError(await createKey(first.merchantId), 400, 'api_key_limit');
        assert.equal((await server.signed(first, 'GET', '/api/v1/merchant')).status, 401, 'a new key does not revive the revoked one');
      });

      it('revoking an unknown key is 404 api_key_not_found', async () => {
        const m = await server.createMerchant();
        assertError(await revokeKey(m.merchantId, 'tg_test_doesnotexist'), 404, 'api_key_not_found', 'api_key');
      });

      it('a merchant cannot revoke another merchant’s key', async () => {
        const a = await server.createMerchant();
        const b = await server.createMerchant();
        assertError(await revokeKey(a.merchantId, b.apiKey), 404, 'api_key_not_found', 'api_key');
        assert.equal((await server.signed(b, 'GET', '/api/v1/merchant')).status, 200);
      });

      it('creating a key for an unknown merchant is 404 merchant_not_found', async () => {
        const before = await count(server, 'api_keys');
        assertError(await createKey('nobody_here'), 404, 'merchant_not_found', 'merchant_id');
        assert.equal(await count(server, 'api_keys'), before);
      });

      it('concurrent key creation respects the limit of two active keys', async () => {
        const m = await server.createMerchant();
        const results = await Promise.all(Array.from({ length: 6 }, () => createKey(m.merchantId)));
        const created = results.filter((r) => r.status === 201);
        assert.equal(created.length, 1, results.map((r) => `${r.status} ${r.body.code ?? ''}`).join(', '));
        for (const r of results) if (r.status !== 201) assertError(r, 400, 'api_key_limit');
        const { rows } = await server.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL',
          [m.merchantId],
        );
        assert.equal(rows[0]!.n, 2);
      });
    });

    describe('public merchant view', () => {
      it('returns exactly the wire.md fields', async () => {
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
        });
        for (const leak of ['fee_balance', 'return_urls', 'api_key', m.apiKey, m.apiSecret, 'shop.example.com', 'card_enabled', 'created_at']) {
          assert.equal(r.text.includes(leak), false, `public view leaks ${leak}`);
        }
      });

      it('includes logo_url only when set', async () => {
        const m = await server.createMerchant({ body: { logo_url: 'https://cdn.example.com/l.png' } });
        const r = await server.request('GET', `/merchants/${m.merchantId}`);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(Object.keys(r.body).sort(), ['logo_url', 'merchant_id', 'name', 'payment_methods', 'receive_type', 'wallets']);
        assert.equal(r.body.logo_url, 'https://cdn.example.com/l.png');
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
