import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isId } from '@tollgate/protocol';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET, PAYER, PAYER_2, setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { setScannedChainTime, startCheckoutServer } from './checkout-fixtures.ts';

const USDC = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
/** Distinct anvil-style payer addresses (order_conflict forbids two live orders with the same terms). */
const payer = (i: number) => `0x${(0x1000 + i).toString(16).padStart(40, '0')}`;

/** Products, payment links and public quick-pay sessions through real HTTP (no chain). */
for (const backend of backends()) {
  describe(`quick-pay API (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let other: Creds;

    async function product(body: Record<string, unknown> = {}) {
      const r = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Coffee beans', description: '250 g', image_url: 'https://shop.example/beans.png', price: '12.50', ...body } });
      assert.equal(r.status, 200, r.text);
      return r.body;
    }
    async function link(body: Record<string, unknown>, who = m) {
      const r = await s.signed(who, 'POST', '/api/v1/payment-links', { body });
      assert.equal(r.status, 200, r.text);
      return r.body;
    }
    const open = (linkId: string, body: Record<string, unknown>) => s.request('POST', `/quickpay/v1/links/${linkId}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', ...body } });

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s, { topUp: '100.00' });
      other = await setupMerchant(s, { name: 'Other' });
    });
    after(() => s.close());

    it('creates, reads, lists and updates a product; the price is a server-owned decimal string', async () => {
      const p = await product();
      assert.ok(isId('prd', p.product_id));
      assert.deepEqual({ ...p, product_id: undefined, created_at: undefined }, { product_id: undefined, created_at: undefined, name: 'Coffee beans', description: '250 g', image_url: 'https://shop.example/beans.png', price: '12.50', active: true });
      assert.equal((await s.signed(m, 'GET', `/api/v1/products/${p.product_id}`)).body.price, '12.50');
      assert.ok((await s.signed(m, 'GET', '/api/v1/products')).body.data.some((x: any) => x.product_id === p.product_id));
      const u = await s.signed(m, 'POST', `/api/v1/products/${p.product_id}`, { body: { price: '13', inventory: 5 } });
      assert.equal(u.status, 200, u.text);
      assert.deepEqual([u.body.name, u.body.price, u.body.inventory], ['Coffee beans', '13', 5]);
      // another merchant sees nothing
      assert.equal((await s.signed(other, 'GET', `/api/v1/products/${p.product_id}`)).body.code, 'product_not_found');
      for (const [body, param] of [
        [{ price: '1.0000001' }, 'price'],
        [{ price: '-1' }, 'price'],
        [{ price: '1e3' }, 'price'],
        [{ price: '' }, 'price'],
        [{ image_url: 'http://insecure.example/x.png' }, 'image_url'],
        [{ name: '   ' }, 'name'],
        [{ fiat_currency: 'USD' }, 'fiat_amount'],
      ] as const) {
        const r = await s.signed(m, 'POST', '/api/v1/products', { body: { ...{ name: 'X', price: '1' }, ...(body as Record<string, unknown>) } });
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(r.body.param, param, JSON.stringify(body));
      }
    });

    it('a fixed-price link: public view converts the price exactly per token; a session returns its order terms', async () => {
      const p = await product({ price: '12.50' });
      const l = await link({ product_id: p.product_id });
      assert.ok(isId('pl', l.link_id));
      assert.equal(l.url, `http://127.0.0.1:8402/quickpay/pay/${l.link_id}`);
      const v = await s.request('GET', `/quickpay/v1/links/${l.link_id}`);
      assert.equal(v.status, 200, v.text);
      assert.deepEqual([v.body.state, v.body.kind, v.body.price, v.body.product.name, v.body.merchant.merchant_id], ['ACTIVE', 'fixed', '12.50', 'Coffee beans', m.merchantId]);
      assert.deepEqual(
        v.body.payment_options.map((o: any) => [o.token_symbol, o.amount_wei]),
        [
          ['USDC', '12500000'],
          ['USDT', '12500000'],
        ],
      );

      const r = await open(l.link_id, { from_address: PAYER, memo: ' table 7 ' });
      assert.equal(r.status, 200, r.text);
      assert.ok(isId('qps', r.body.session_id));
      assert.equal(r.body.status, 'OPEN');
      assert.equal(r.body.memo, 'table 7');
      assert.equal(r.body.amount, '12.50');
      assert.deepEqual([r.body.terms.pay_to_address, r.body.terms.amount_wei, r.body.terms.token_contract, r.body.terms.decimals], [MERCHANT_WALLET, '12500000', USDC, 6]);
      const order = (await s.signed(m, 'GET', `/api/v1/orders/${r.body.terms.order_id}`)).body;
      assert.deepEqual([order.status, order.amount_wei, order.dapp_order_id], ['CHECKOUT_VERIFIED', '12500000', `quickpay:${r.body.session_id}`]);
      const st = await s.request('GET', `/quickpay/v1/sessions/${r.body.session_id}`);
      assert.deepEqual([st.status, st.body.status, st.body.order_status, st.body.terms.order_id], [200, 'OPEN', 'CHECKOUT_VERIFIED', r.body.terms.order_id]);
      // an amount on a fixed link must be the price
      assert.equal((await open(l.link_id, { from_address: PAYER_2, amount: '1' })).body.param, 'amount');
      // records
      const rec = await s.signed(m, 'GET', `/api/v1/payment-links/${l.link_id}/sessions`);
      assert.equal(rec.status, 200, rec.text);
      assert.deepEqual(
        rec.body.data.map((x: any) => [x.session_id, x.memo, x.order_id, x.amount]),
        [[r.body.session_id, 'table 7', r.body.terms.order_id, '12.50']],
      );
      assert.equal((await s.signed(other, 'GET', `/api/v1/payment-links/${l.link_id}/sessions`)).status, 404);
    });

    it('an any-amount link enforces min and max; the amount and memo are kept', async () => {
      const l = await link({ min_amount: '1', max_amount: '50.5', options: '31337:USDC' });
      const v = (await s.request('GET', `/quickpay/v1/links/${l.link_id}`)).body;
      assert.deepEqual([v.kind, v.min_amount, v.max_amount, v.payment_options.length, v.payment_options[0].amount_wei], ['any_amount', '1', '50.5', 1, undefined]);
      for (const amount of ['0.999999', '50.500001', '100']) {
        const r = await open(l.link_id, { from_address: payer(1), amount });
        assert.deepEqual([r.status, r.body.code, r.body.param], [400, 'amount_out_of_range', 'amount'], amount);
      }
      assert.equal((await open(l.link_id, { from_address: payer(1) })).body.param, 'amount');
      assert.equal((await open(l.link_id, { from_address: payer(1), amount: '1.0000001' })).body.code, 'invalid_amount');
      assert.equal((await open(l.link_id, { from_address: payer(1), amount: '5', token_symbol: 'USDT' })).body.code, 'token_not_supported');
      const ok = await open(l.link_id, { from_address: payer(1), amount: '50.5', memo: 'invoice 2291' });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual([ok.body.amount, ok.body.terms.amount_wei, ok.body.memo], ['50.5', '50500000', 'invoice 2291']);
      const low = await open(l.link_id, { from_address: payer(2), amount: '1' });
      assert.equal(low.body.terms.amount_wei, '1000000');
    });

    it('a link at its count limit refuses new sessions (410 link_sold_out); an expired session frees its slot', async () => {
      const p = await product({ price: '2' });
      const l = await link({ product_id: p.product_id, max_payments: 2 });
      const a = await open(l.link_id, { from_address: payer(10) });
      const b = await open(l.link_id, { from_address: payer(11) });
      assert.deepEqual([a.status, b.status], [200, 200]);
      const c = await open(l.link_id, { from_address: payer(12) });
      assert.deepEqual([c.status, c.body.code], [410, 'link_sold_out']);
      assert.equal((await s.request('GET', `/quickpay/v1/links/${l.link_id}`)).body.state, 'SOLD_OUT');
      // The orders expire (the sweeper, once the chain was scanned past their expiry): their slots come back.
      const ttl = s.tg.deps.config.orderTtlSeconds + 1;
      s.clock.advance(ttl);
      try {
        await setScannedChainTime(s, new Date(s.clock.now()));
        const deadline = Date.now() + 10_000;
        while ((await s.request('GET', `/quickpay/v1/sessions/${a.body.session_id}`)).body.order_status !== 'EXPIRED') {
          assert.ok(Date.now() < deadline, 'the order expired');
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal((await s.request('GET', `/quickpay/v1/links/${l.link_id}`)).body.state, 'ACTIVE');
        assert.equal((await open(l.link_id, { from_address: payer(13) })).status, 200);
      } finally {
        s.clock.advance(-ttl);
      }
      // concurrent payers never both take the last slot
      const l2 = await link({ product_id: p.product_id, max_payments: 1 });
      const race = await Promise.all([20, 21, 22, 23].map((i) => open(l2.link_id, { from_address: payer(i) })));
      assert.deepEqual(race.map((r) => r.status).sort(), [200, 410, 410, 410]);
      // product inventory is shared across links
      const q = await product({ price: '3', inventory: 1 });
      const l3 = await link({ product_id: q.product_id });
      const l4 = await link({ product_id: q.product_id });
      assert.equal((await open(l3.link_id, { from_address: payer(30) })).status, 200);
      assert.equal((await open(l4.link_id, { from_address: payer(31) })).body.code, 'link_sold_out');
    });

    it('an idempotency key returns the same session; another request with it is 409', async () => {
      const p = await product({ price: '4' });
      const l = await link({ product_id: p.product_id });
      const body = { from_address: payer(40), idempotency_key: 'click-1' };
      const [a, b] = await Promise.all([open(l.link_id, body), open(l.link_id, body)]);
      assert.deepEqual([a.status, b.status], [200, 200], `${a.text} ${b.text}`);
      assert.equal(a.body.session_id, b.body.session_id);
      assert.equal(a.body.terms.order_id, b.body.terms.order_id);
      const again = await open(l.link_id, body);
      assert.equal(again.body.session_id, a.body.session_id);
      const n = (await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM quickpay_sessions WHERE link_id = $1', [l.link_id])).rows[0]!.n;
      assert.equal(n, 1);
      const clash = await open(l.link_id, { ...body, from_address: payer(41) });
      assert.deepEqual([clash.status, clash.body.code], [409, 'idempotency_key_conflict']);
      // the same key on another link is another session
      const l2 = await link({ product_id: p.product_id });
      assert.notEqual((await open(l2.link_id, { from_address: payer(42), idempotency_key: 'click-1' })).body.session_id, a.body.session_id);
    });

    it('an expired session returns status only, also through its idempotency key', async () => {
      const p = await product({ price: '5' });
      const l = await link({ product_id: p.product_id });
      const body = { from_address: payer(50), idempotency_key: 'exp-1' };
      const a = await open(l.link_id, body);
      assert.equal(a.status, 200, a.text);
      s.clock.advance(s.tg.deps.config.orderTtlSeconds + 1);
      try {
        // The order-expiry worker ticks every second and may or may not have run yet: run it
        // here so the session's order is expired for sure, as it is a second later in production.
        await s.tg.deps.orders.expireDue();
        const st = await s.request('GET', `/quickpay/v1/sessions/${a.body.session_id}`);
        assert.deepEqual(st.body, { session_id: a.body.session_id, status: 'EXPIRED', order_id: a.body.terms.order_id, order_status: 'EXPIRED' });
        const again = await open(l.link_id, body);
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(Object.keys(again.body).sort(), ['order_id', 'order_status', 'session_id', 'status']);
        assert.equal(again.body.status, 'EXPIRED');
      } finally {
        s.clock.advance(-(s.tg.deps.config.orderTtlSeconds + 1));
      }
    });

    it('deactivation and expiry of a link: 410; limits can be changed, what is sold cannot', async () => {
      const p = await product({ price: '6' });
      const l = await link({ product_id: p.product_id });
      const off = await s.signed(m, 'POST', `/api/v1/payment-links/${l.link_id}`, { body: { active: false } });
      assert.deepEqual([off.status, off.body.active], [200, false]);
      assert.equal((await open(l.link_id, { from_address: payer(60) })).body.code, 'link_inactive');
      assert.equal((await s.request('GET', `/quickpay/v1/links/${l.link_id}`)).body.state, 'INACTIVE');
      const on = await s.signed(m, 'POST', `/api/v1/payment-links/${l.link_id}`, { body: { active: true, expires_at: Math.floor(s.clock.now() / 1000) + 600 } });
      assert.equal(on.status, 200, on.text);
      assert.equal((await open(l.link_id, { from_address: payer(61) })).status, 200);
      s.clock.advance(601);
      try {
        const r = await open(l.link_id, { from_address: payer(62) });
        assert.deepEqual([r.status, r.body.code], [410, 'link_expired']);
      } finally {
        s.clock.advance(-601);
      }
      const change = await s.signed(m, 'POST', `/api/v1/payment-links/${l.link_id}`, { body: { product_id: p.product_id } });
      assert.equal(change.status, 400);
      assert.equal((await s.signed(other, 'POST', `/api/v1/payment-links/${l.link_id}`, { body: { active: false } })).body.code, 'link_not_found');
    });

    it('refusals of link creation and unknown ids', async () => {
      for (const [body, code] of [
        [{ min_amount: '5' }, 'invalid_amount'],
        [{ min_amount: '5', max_amount: '1' }, 'invalid_amount'],
        [{ product_id: 'prd_nope' }, 'product_not_found'],
        [{ min_amount: '1', max_amount: '2', options: '1:USDC' }, 'wallet_not_found'],
        [{ min_amount: '1', max_amount: '2', payment_rails: 'card' }, 'rail_not_enabled'],
        [{ min_amount: '1', max_amount: '2', max_payments: 0 }, 'invalid_request'],
      ] as const) {
        const r = await s.signed(m, 'POST', '/api/v1/payment-links', { body });
        assert.equal(r.body.code, code, `${JSON.stringify(body)}: ${r.text}`);
      }
      assert.equal((await s.request('GET', '/quickpay/v1/links/pl_unknown')).status, 404);
      assert.equal((await s.request('GET', '/quickpay/v1/sessions/qps_unknown')).body.code, 'quickpay_session_not_found');
      assert.equal((await open('pl_unknown', { from_address: PAYER })).body.code, 'link_not_found');
    });
  });
}

describe('quick-pay public routes are rate-limited per address like checkout (pglite)', () => {
  let s: TestServer;
  after(() => s?.close());
  it('session creation shares the checkout_bind class, reads the public_read class: 429 with Retry-After', async () => {
    s = await startCheckoutServer('pglite', { http: { rateLimits: { checkout_bind: { max: 2, timeWindowMs: 60_000 }, public_read: { max: 3, timeWindowMs: 60_000 } } } });
    const m = await setupMerchant(s);
    const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '9' } });
    const open = (i: number) => s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: payer(900 + i), amount: '2' } });
    assert.deepEqual([(await open(1)).status, (await open(2)).status], [200, 200]);
    const limited = await open(3);
    assert.deepEqual([limited.status, limited.body.code], [429, 'rate_limited']);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    const reads = [];
    for (let i = 0; i < 4; i++) reads.push((await s.request('GET', `/quickpay/v1/links/${l.body.link_id}`)).status);
    assert.deepEqual(reads, [200, 200, 200, 429]);
  });
});
