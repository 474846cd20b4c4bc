import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { assertError, count, USDC, WALLET, WALLET_CHECKSUM } from './admin-fixtures.ts';

// The admin API's merchant accounts: wallets, fee-balance top-ups and API keys (admin.test.ts has
// merchant creation, admin authentication, lookups and the public view).
for (const backend of backends()) {
  describe(`admin API: wallets, fees, keys (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ backend, chains: [fakeChain()] });
    });
    after(() => server.close());

    const getMerchant = (id: string) => server.admin('GET', `/admin/v1/merchants/${id}`);

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
        assertError(await server.admin('POST', `/admin/v1/merchants/${m.merchantId}/fee-balance/top-ups`, { amount: '1', currency: 'USD' }), 400, 'invalid_request', 'currency');
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
        const { rows } = await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL', [m.merchantId]);
        assert.equal(rows[0]!.n, 2);
      });
    });
  });
}
