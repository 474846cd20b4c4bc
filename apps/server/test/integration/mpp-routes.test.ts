import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN, fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';

/**
 * Route pricing of machine payments: the merchant API (HMAC; the shared security suite covers its
 * authentication through MERCHANT_ROUTES), the admin equivalents and the CLI, with
 * route_pricing_version incremented on every change and nothing changed by bad input.
 */
for (const backend of backends()) {
  describe(`mpp route pricing (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let other: Creds;
    const USDC = fakeChain().tokens[0]!.address;
    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()], role: 'api' });
      m = await setupMerchant(s);
      other = await setupMerchant(s, { name: 'Other' });
    });
    after(() => s?.close());

    const put = (c: Creds, route: string, body: Record<string, unknown>) => s.signed(c, 'PUT', `/api/v1/mpp/routes/${encodeURIComponent(route)}`, { body });

    it('sets a price with the merchant wallet as recipient, version 1, and lists it', async () => {
      const r = await put(m, 'GET:api:data', { amount_wei: '1500', chain_id: 31337, token_symbol: 'USDC' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual({ ...r.body, updated_at: undefined }, { route_canonical: 'GET:api:data', amount_wei: '1500', chain_id: 31337, token_symbol: 'USDC', token_contract: USDC, recipient: MERCHANT_WALLET, route_pricing_version: 1, updated_at: undefined });
      const list = await s.signed(m, 'GET', '/api/v1/mpp/routes');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((x: any) => [x.route_canonical, x.amount_wei]),
        [['GET:api:data', '1500']],
      );
      // Another merchant sees only its own routes.
      assert.deepEqual((await s.signed(other, 'GET', '/api/v1/mpp/routes')).body.data, []);
    });

    it('increments route_pricing_version on every change, not on an identical repeat', async () => {
      const a = await put(m, 'POST:api:jobs', { amount_wei: '10', chain_id: 31337, token_symbol: 'USDC' });
      const same = await put(m, 'POST:api:jobs', { amount_wei: '10', chain_id: 31337, token_symbol: 'USDC' });
      const b = await put(m, 'POST:api:jobs', { amount_wei: '11', chain_id: 31337, token_symbol: 'USDC' });
      const c = await put(m, 'POST:api:jobs', { amount_wei: '11', chain_id: 31337, token_symbol: 'USDT' });
      assert.deepEqual([a.body.route_pricing_version, same.body.route_pricing_version, b.body.route_pricing_version, c.body.route_pricing_version], [1, 1, 2, 3]);
      assert.equal(c.body.token_symbol, 'USDT');
    });

    for (const [what, route, body, status, code, param] of [
      ['a route without a method', 'api:data', { amount_wei: '1', chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_request', 'route_canonical'],
      ['a lowercase method', 'get:api', { amount_wei: '1', chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_request', 'route_canonical'],
      ['a route with only a method', 'GET', { amount_wei: '1', chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_request', 'route_canonical'],
      ['an empty segment', 'GET:api::x', { amount_wei: '1', chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_request', 'route_canonical'],
      ['a zero amount', 'GET:x', { amount_wei: '0', chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_amount', 'amount_wei'],
      ['a decimal amount', 'GET:x', { amount_wei: '1.5', chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_amount', 'amount_wei'],
      ['an amount above uint256', 'GET:x', { amount_wei: (1n << 256n).toString(), chain_id: 31337, token_symbol: 'USDC' }, 400, 'invalid_amount', 'amount_wei'],
      ['an unknown chain', 'GET:x', { amount_wei: '1', chain_id: 1, token_symbol: 'USDC' }, 400, 'chain_not_supported', 'chain_id'],
      ['an unknown token', 'GET:x', { amount_wei: '1', chain_id: 31337, token_symbol: 'DAI' }, 400, 'token_not_supported', 'token_symbol'],
      ['an extra field', 'GET:x', { amount_wei: '1', chain_id: 31337, token_symbol: 'USDC', recipient: MERCHANT_WALLET }, 400, 'invalid_request', undefined],
    ] as const) {
      it(`refuses ${what} and changes nothing`, async () => {
        const before = (await s.signed(m, 'GET', '/api/v1/mpp/routes')).body.data;
        const r = await put(m, route, body);
        assert.equal(r.status, status, r.text);
        assert.equal(r.body.code, code);
        if (param) assert.equal(r.body.param, param);
        assert.deepEqual((await s.signed(m, 'GET', '/api/v1/mpp/routes')).body.data, before);
      });
    }

    it('refuses a chain/token the merchant has no wallet for (wallet_not_found)', async () => {
      const bare = await s.createMerchant({ name: 'No wallets' });
      const r = await put(bare, 'GET:api:data', { amount_wei: '1', chain_id: 31337, token_symbol: 'USDC' });
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'wallet_not_found');
    });

    it('admin equivalents: set and list for a merchant; unknown merchant is 404; bearer required', async () => {
      const r = await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/mpp/routes/GET:api:admin`, { amount_wei: '7', chain_id: 31337, token_symbol: 'USDC' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.route_pricing_version, 1);
      const list = await s.admin('GET', `/admin/v1/merchants/${m.merchantId}/mpp/routes`);
      assert.ok(list.body.data.some((x: any) => x.route_canonical === 'GET:api:admin' && x.amount_wei === '7'));
      assert.equal((await s.admin('GET', '/admin/v1/merchants/nope_nope/mpp/routes')).body.code, 'merchant_not_found');
      assert.equal((await s.admin('PUT', '/admin/v1/merchants/nope_nope/mpp/routes/GET:a', { amount_wei: '7', chain_id: 31337, token_symbol: 'USDC' })).body.code, 'merchant_not_found');
      assert.equal((await s.request('GET', `/admin/v1/merchants/${m.merchantId}/mpp/routes`)).status, 401);
    });

    it('the pruner deletes unpaid challenges only once they are past expiry, grace and an hour', async () => {
      const ask = (i: number) => s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: m.merchantId, route_canonical: 'GET:api:data', request_canonical: `GET:api:data:p${i}`, payer_addr: MERCHANT_WALLET } });
      const old = await ask(1);
      assert.equal(old.status, 402, old.text);
      const count = async (id: string) => (await s.db.query('SELECT 1 FROM mpp_challenges WHERE id = $1', [id])).rows.length;
      const saved = s.clock.ms;
      try {
        s.clock.advance(300 + 600 + 3600 - 5);
        assert.equal(await s.tg.deps.mpp.pruneExpired(), 0);
        assert.equal(await count(old.body.challenge_id), 1);
        const fresh = await ask(2);
        s.clock.advance(10);
        assert.ok((await s.tg.deps.mpp.pruneExpired()) >= 1);
        assert.equal(await count(old.body.challenge_id), 0);
        assert.equal(await count(fresh.body.challenge_id), 1);
      } finally {
        s.clock.ms = saved;
      }
    });

    it('CLI: tollgate mpp set-price / routes', async () => {
      const env = { TOLLGATE_URL: s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN };
      const cli = async (...args: string[]) => {
        const p = spawnTollgate(args, env);
        const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
        return { code, out: p.output() };
      };
      const set = await cli('mpp', 'set-price', m.merchantId, 'GET:api:cli', '--chain', '31337', '--token', 'USDC', '--amount', '99', '--json');
      assert.equal(set.code, 0, set.out);
      assert.equal(JSON.parse(set.out).amount_wei, '99');
      const routes = await cli('mpp', 'routes', m.merchantId);
      assert.equal(routes.code, 0, routes.out);
      assert.match(routes.out, /GET:api:cli/);
      const bad = await cli('mpp', 'set-price', m.merchantId, 'GET:api:cli', '--chain', '31337', '--token', 'USDC', '--amount', '0');
      assert.notEqual(bad.code, 0);
    });
  });
}
