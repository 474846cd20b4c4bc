import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseTrustProxy } from '../../src/config/trust-proxy.ts';
import { HOLD_SECONDS, MAX_UNPAID_HOLDS } from '../../src/quickpay/holds.ts';
import { backends } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';

/** Random-looking payer addresses: anyone can type any address into the page. */
const payer = (i: number) => `0x${(0xabc000 + i).toString(16).padStart(40, '0')}`;
/** Documentation addresses (RFC 5737), named by the proxy in X-Forwarded-For. */
const CLIENT_A = '203.0.113.7';
const CLIENT_B = '198.51.100.23';
const CLIENT_C = '192.0.2.99';

/**
 * Issue 29 item 7: unpaid anonymous sessions must not hold a product's stock for the order TTL.
 * Before, three sessions from random paying addresses sold out a product of 3 until their orders
 * expired. Now an unpaid session holds its unit for HOLD_SECONDS only, and one client address holds
 * at most MAX_UNPAID_HOLDS unpaid units of a link or product (docs/quickpay.md, Limits and holds).
 */
for (const backend of backends()) {
  describe(`quick-pay stock holds (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    before(async () => {
      s = await startCheckoutServer(backend, { config: { trustProxy: parseTrustProxy('1', 'TRUST_PROXY') } });
      m = await setupMerchant(s, { topUp: '100.00' });
    });
    after(() => s.close());

    const open = (linkId: string, client: string, body: Record<string, unknown>) => s.request('POST', `/quickpay/v1/links/${linkId}/sessions`, { headers: { 'x-forwarded-for': client }, body: { chain_id: 31337, token_symbol: 'USDC', ...body } });
    const state = async (linkId: string) => (await s.request('GET', `/quickpay/v1/links/${linkId}`)).body.state;

    it('one address cannot take the stock; unpaid holds lapse long before the order TTL', async () => {
      assert.ok(HOLD_SECONDS * 2 <= s.tg.deps.config.orderTtlSeconds, 'the hold is much shorter than the order TTL');
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Limited print', price: '5', inventory: 3 } });
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id } });
      const linkId = l.body.link_id as string;

      // Client A opens sessions with random paying addresses: only MAX_UNPAID_HOLDS of them hold stock.
      const fromA = [];
      for (let i = 0; i < MAX_UNPAID_HOLDS + 1; i++) fromA.push(await open(linkId, CLIENT_A, { from_address: payer(i) }));
      assert.deepEqual(
        fromA.map((r) => r.status),
        [...Array(MAX_UNPAID_HOLDS).fill(200), 429],
        fromA.map((r) => r.text).join('\n'),
      );
      assert.equal(fromA.at(-1)!.body.code, 'quickpay_hold_limit');
      assert.equal(await state(linkId), 'ACTIVE', 'the stock is not sold out by one address');
      // The hold is the session's payment window.
      const held = fromA[0]!.body;
      assert.ok(held.expires_at * 1000 - s.clock.now() <= HOLD_SECONDS * 1000 && held.expires_at * 1000 - s.clock.now() > (HOLD_SECONDS - 5) * 1000, `window ${held.expires_at * 1000 - s.clock.now()} ms`);
      assert.equal(held.terms.expires_at, held.expires_at);

      // Another payer still buys the last unit; then the product is sold out for everyone.
      assert.equal((await open(linkId, CLIENT_B, { from_address: payer(10) })).status, 200);
      assert.equal(await state(linkId), 'SOLD_OUT');
      const late = await open(linkId, CLIENT_C, { from_address: payer(20) });
      assert.deepEqual([late.status, late.body.code], [410, 'link_sold_out']);

      // Past the hold (well inside the order TTL), the unpaid units are free again without waiting
      // for the expiry sweeper, and client A may hold again.
      s.clock.advance((HOLD_SECONDS + 1) * 1000);
      try {
        assert.equal(await state(linkId), 'ACTIVE');
        const again = await Promise.all([open(linkId, CLIENT_C, { from_address: payer(21) }), open(linkId, CLIENT_A, { from_address: payer(3) })]);
        assert.deepEqual(
          again.map((r) => r.status),
          [200, 200],
          again.map((r) => r.text).join('\n'),
        );
      } finally {
        s.clock.advance(-(HOLD_SECONDS + 1) * 1000);
      }
    });

    it('the per-address limit counts a product across its links; unlimited links have no hold', async () => {
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Poster', price: '7', inventory: 10 } });
      const [l1, l2] = await Promise.all([1, 2].map(() => s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id } })));
      assert.equal((await open(l1!.body.link_id, CLIENT_B, { from_address: payer(30) })).status, 200);
      assert.equal((await open(l2!.body.link_id, CLIENT_B, { from_address: payer(31) })).status, 200);
      const third = await open(l2!.body.link_id, CLIENT_B, { from_address: payer(32) });
      assert.deepEqual([third.status, third.body.code], [429, 'quickpay_hold_limit']);

      // No limit, no hold: the order TTL is the window and one address may open many sessions.
      const free = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '50' } });
      const many = [];
      for (let i = 0; i < MAX_UNPAID_HOLDS + 2; i++) many.push(await open(free.body.link_id, CLIENT_B, { from_address: payer(40 + i), amount: '3' }));
      assert.deepEqual(
        many.map((r) => r.status),
        Array(MAX_UNPAID_HOLDS + 2).fill(200),
      );
      assert.ok(many[0]!.body.expires_at * 1000 - s.clock.now() > HOLD_SECONDS * 1000, 'the order TTL');
    });
  });
}
