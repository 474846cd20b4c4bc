// TollgateClient.quickpay against a running Tollgate: real HTTP, real database (PGlite, and Postgres
// when TEST_DATABASE_URL is set). Products and payment links round-trip through their wire fields
// (comma-joined rails and options, integers, booleans, signed list queries), a payer's session shows
// up in the link's records, refusals come back as typed errors, and the README's quick-pay example
// runs as written.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { backends } from '../../../apps/server/test/helpers/db.ts';
import type { Creds, TestServer } from '../../../apps/server/test/helpers/server.ts';
import { startCheckoutServer } from '../../../apps/server/test/integration/checkout-fixtures.ts';
import { setupCardMerchant } from '../../../apps/server/test/integration/card-fixtures.ts';
import { TollgateApiError, TollgateClient, TollgateUnknownOutcomeError, paymentLinkBody, productBody } from '../src/index.ts';

async function rejection(p: Promise<unknown>): Promise<TollgateApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TollgateApiError, `expected TollgateApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

/** The ```ts block under "## Payment links (quick-pay)" of the SDK README. */
function readmeExample(): string {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## Payment links (quick-pay)\n')[1];
  const code = section && /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(code, 'the README has its quick-pay example');
  return code;
}

for (const backend of backends()) {
  describe(`TollgateClient.quickpay against a running Tollgate (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let client: TollgateClient;

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
      client = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(() => s.close());

    it('products: create with every field, read, update only what is given, list with a signed limit', async () => {
      const p = await client.quickpay.createProduct({
        name: 'Espresso cup',
        description: 'Stoneware, 90 ml',
        imageUrl: 'https://shop.example/cup.png',
        price: '9.99',
        fiatCurrency: 'EUR',
        fiatAmount: '9.50',
        inventory: 12,
        active: true,
      });
      assert.match(p.product_id, /^prd_/);
      assert.deepEqual(
        { ...p, product_id: undefined, created_at: undefined },
        {
          product_id: undefined,
          created_at: undefined,
          name: 'Espresso cup',
          description: 'Stoneware, 90 ml',
          image_url: 'https://shop.example/cup.png',
          price: '9.99',
          fiat_currency: 'EUR',
          fiat_amount: '9.50',
          inventory: 12,
          active: true,
        },
      );
      assert.deepEqual(await client.quickpay.getProduct(p.product_id), p);
      const u = await client.quickpay.updateProduct(p.product_id, { price: '10.50', inventory: -1 });
      assert.deepEqual([u.price, u.inventory, u.name, u.fiat_amount], ['10.50', undefined, 'Espresso cup', '9.50']);
      const off = await client.quickpay.updateProduct(p.product_id, { active: false });
      assert.equal(off.active, false);
      await client.quickpay.createProduct({ name: 'Second', price: '1' });
      const one = await client.quickpay.listProducts({ limit: 1 });
      assert.deepEqual(
        one.data.map((x) => x.name),
        ['Second'],
        'newest first, limit honoured (the query is signed)',
      );
      assert.ok((await client.quickpay.listProducts()).data.length >= 2);
    });

    it('links: fixed price with card, any-amount with options; read, list, update limits and expiry, deactivate', async () => {
      const p = await client.quickpay.createProduct({ name: 'Mug', price: '12', fiatCurrency: 'EUR', fiatAmount: '11.00' });
      const fixed = await client.quickpay.createPaymentLink({ productId: p.product_id, paymentRails: ['crypto', 'card'], maxPayments: 3 });
      assert.match(fixed.link_id, /^pl_/);
      assert.equal(fixed.url, `${s.tg.deps.config.publicBaseUrl.replace(/\/+$/, '')}/quickpay/pay/${fixed.link_id}`);
      assert.deepEqual([fixed.product_id, fixed.payment_rails, fixed.max_payments, fixed.options, fixed.active], [p.product_id, ['crypto', 'card'], 3, [], true]);
      const anyAmount = await client.quickpay.createPaymentLink({ minAmount: '1', maxAmount: '50.5', options: [{ chainId: 31337, tokenSymbol: 'USDC' }] });
      assert.deepEqual([anyAmount.min_amount, anyAmount.max_amount, anyAmount.options], ['1', '50.5', [{ chain_id: 31337, token_symbol: 'USDC' }]]);
      assert.deepEqual(await client.quickpay.getPaymentLink(fixed.link_id), fixed);
      assert.deepEqual(
        (await client.quickpay.listPaymentLinks({ limit: 2 })).data.map((l) => l.link_id),
        [anyAmount.link_id, fixed.link_id],
      );

      const until = new Date(s.clock.now() + 3_600_000);
      const changed = await client.quickpay.updatePaymentLink(fixed.link_id, { maxPayments: 5, expiresAt: until });
      assert.deepEqual([changed.max_payments, changed.expires_at, changed.active], [5, Math.floor(until.getTime() / 1000), true]);
      const open = await client.quickpay.updatePaymentLink(fixed.link_id, { maxPayments: -1, expiresAt: 0 });
      assert.deepEqual([open.max_payments, open.expires_at], [undefined, undefined]);
      const off = await client.quickpay.deactivatePaymentLink(anyAmount.link_id);
      assert.equal(off.active, false);
      const pub = await s.request('GET', `/quickpay/v1/links/${anyAmount.link_id}`);
      assert.equal(pub.body.state, 'INACTIVE');
    });

    it("link sessions: a payer's session with its amount, memo and order, newest first", async () => {
      const link = await client.quickpay.createPaymentLink({ minAmount: '1', maxAmount: '20' });
      const payer = '0x0000000000000000000000000000000000004321';
      for (const [amount, memo] of [
        ['2.50', 'first'],
        ['7', 'invoice 88'],
      ]) {
        const r = await s.request('POST', `/quickpay/v1/links/${link.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: payer, amount, memo } });
        assert.equal(r.status, 200, r.text);
      }
      const { data } = await client.quickpay.listPaymentLinkSessions(link.link_id);
      assert.deepEqual(
        data.map((x) => [x.amount, x.memo, x.status, x.rail, x.chain_id, x.token_symbol, x.from_address, x.order_status]),
        [
          ['7', 'invoice 88', 'OPEN', 'crypto', 31337, 'USDC', payer, 'CHECKOUT_VERIFIED'],
          ['2.50', 'first', 'OPEN', 'crypto', 31337, 'USDC', payer, 'CHECKOUT_VERIFIED'],
        ],
      );
      assert.ok(data.every((x) => /^qps_/.test(x.session_id) && /^ord_/.test(x.order_id ?? '')));
      assert.equal((await client.quickpay.listPaymentLinkSessions(link.link_id, { limit: 1 })).data.length, 1);
    });

    it('refusals are typed errors; wrong parameter types throw before anything is sent', async () => {
      const nf = await rejection(client.quickpay.getProduct('prd_doesnotexist'));
      assert.deepEqual([nf.status, nf.code], [404, 'product_not_found']);
      const nl = await rejection(client.quickpay.listPaymentLinkSessions('pl_doesnotexist'));
      assert.deepEqual([nl.status, nl.code], [404, 'link_not_found']);
      const range = await rejection(client.quickpay.createPaymentLink({ minAmount: '50', maxAmount: '1' }));
      assert.equal(range.status, 400);
      assert.equal(typeof range.code, 'string');
      // Another merchant's product is not found, not shown.
      const other = await setupCardMerchant(s);
      const mine = await client.quickpay.createProduct({ name: 'Mine', price: '1' });
      const theirs = new TollgateClient({ baseUrl: s.url, apiKey: other.apiKey, apiSecret: other.apiSecret });
      assert.equal((await rejection(theirs.quickpay.getProduct(mine.product_id))).code, 'product_not_found');

      const before = (await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM quickpay_products')).rows[0]!.n;
      await assert.rejects(client.quickpay.createProduct({ name: 'x', price: 9.99 as unknown as string }), TypeError);
      await assert.rejects(client.quickpay.createPaymentLink({ paymentRails: 'crypto' as unknown as string[] }), TypeError);
      await assert.rejects(client.quickpay.listProducts({ limit: 101 }), TypeError);
      assert.equal((await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM quickpay_products')).rows[0]!.n, before);
      // the wire shapes, as documented on the builders
      assert.deepEqual(productBody({ name: 'Mug', price: '12.00', fiatCurrency: 'EUR', fiatAmount: '11.00' }, true), { name: 'Mug', price: '12.00', fiat_currency: 'EUR', fiat_amount: '11.00' });
      assert.deepEqual(
        paymentLinkBody({
          minAmount: '1',
          maxAmount: '50',
          paymentRails: ['crypto'],
          options: [
            { chainId: 2345, tokenSymbol: 'USDC' },
            { chainId: 1, tokenSymbol: 'USDT' },
          ],
        }),
        { min_amount: '1', max_amount: '50', payment_rails: 'crypto', options: '2345:USDC,1:USDT' },
      );
    });

    it('a create whose answer is lost is an unknown outcome (not retried)', async () => {
      let calls = 0;
      const lossy = new TollgateClient({
        baseUrl: s.url,
        apiKey: m.apiKey,
        apiSecret: m.apiSecret,
        fetch: async (input, init) => {
          calls++;
          await fetch(input, init); // the server does the work …
          throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }); // … the answer is lost
        },
      });
      await assert.rejects(lossy.quickpay.createPaymentLink({ minAmount: '1', maxAmount: '2' }), TollgateUnknownOutcomeError);
      assert.equal(calls, 1, 'never retried');
    });

    it('the README example runs as written', async () => {
      const logged: unknown[][] = [];
      const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<Record<string, any>>;
      const run = new AsyncFunction('tollgate', 'console', `${readmeExample()}\nreturn { mug, link, tips, sessions };`);
      const out = await run(client, { log: (...a: unknown[]) => logged.push(a) });
      assert.deepEqual([out.mug.price, out.mug.fiat_amount, out.mug.inventory], ['12.00', '11.00', 40]);
      assert.deepEqual([out.link.product_id, out.link.max_payments], [out.mug.product_id, 40]);
      assert.deepEqual(out.sessions, []);
      assert.deepEqual(logged, []);
      assert.equal((await client.quickpay.getPaymentLink(out.tips.link_id)).active, false);
    });
  });
}
