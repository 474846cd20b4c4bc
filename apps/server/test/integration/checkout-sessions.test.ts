import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkoutOf } from '../../src/checkout/service.ts';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import { transitionOrder } from '../../src/orders/transition.ts';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET, PAYER, PAYER_2, setupMerchant } from '../helpers/orders.ts';
import { fakeChain, type Creds, type TestServer } from '../helpers/server.ts';
import { countRows, createSession, markPaymentSeen, RETURN_BASE, sessionStatus, sessionTransitions, startCheckoutServer } from './checkout-fixtures.ts';

const USDC = fakeChain().tokens[0]!.address;

/** Public reads, bind, the 409/410 rules, order → session sync and the sweeper, without a chain. */
for (const backend of backends()) {
  describe(`checkout sessions: reads, bind, lifecycle (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let amount = 1_000_000;
    /** A fresh session with a distinct price (two live orders may not share payer, token and amount). */
    const session = async (over: Record<string, unknown> = {}) => {
      amount += 10_000;
      return (await createSession(s, m, { price: (amount / 1e6).toFixed(2), line_items_json: undefined, ...over })).checkout_id;
    };
    const view = (id: string) => s.request('GET', `/checkout/v1/sessions/${id}`);
    const status = (id: string) => s.request('GET', `/checkout/v1/sessions/${id}/status`);
    const bind = (id: string, body: Record<string, unknown> = {}) => s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER, ...body } });
    const inTx = <T>(fn: (tx: any) => Promise<T>) => s.db.transaction(fn);

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s);
      await s.admin('PUT', `/admin/v1/merchants/${m.merchantId}/return-urls`, { return_urls: [RETURN_BASE] });
    });
    after(() => s.close());

    it('public view: the fields the hosted page reads, no private metadata, client_reference_id, allowlist or credentials', async () => {
      const id = await session({ client_reference_id: 'REF-SENTINEL-7781', success_url: `${RETURN_BASE}/ok`, cancel_url: `${RETURN_BASE}/cancel`, price: '9.99', line_items_json: JSON.stringify([{ name: 'Tee', quantity: 3, amount: '3.33' }]) });
      const r = await view(id);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.deepEqual(Object.keys(r.body).sort(), ['cancel_url', 'checkout_id', 'checkout_type', 'expires_at', 'line_items', 'merchant', 'payment_options', 'payment_rails', 'price', 'public_metadata', 'status', 'success_url']);
      assert.deepEqual(r.body.merchant, { merchant_id: m.merchantId, name: 'Orders Merchant' });
      assert.deepEqual([r.body.status, r.body.checkout_type, r.body.price, r.body.payment_rails], ['OPEN', 'DIRECT', '9.99', ['crypto']]);
      assert.deepEqual(r.body.line_items, [{ name: 'Tee', quantity: 3, amount: '3.33' }]);
      assert.deepEqual(r.body.public_metadata, { campaign: 'spring' });
      // chain_name from the configuration; no explorer_url: this chain's configuration names none.
      assert.deepEqual(
        r.body.payment_options,
        fakeChain().tokens.map((t) => ({ chain_id: 31337, token_symbol: t.symbol, token_contract: t.address, decimals: 6, amount_wei: '9990000', chain_name: 'Test' })),
      );
      assert.deepEqual([r.body.success_url, r.body.cancel_url], [`${RETURN_BASE}/ok`, `${RETURN_BASE}/cancel`]);
      for (const secret of ['PRIVATE-SENTINEL', 'internal_customer', 'REF-SENTINEL-7781', 'client_reference_id', 'private', 'return_urls', m.apiKey, m.apiSecret]) {
        assert.equal(r.text.includes(secret), false, `public view contains ${secret}`);
      }
    });

    it('unknown and malformed ids are 404 session_not_found on every public route, without echoing the id', async () => {
      const unknown = `cs_${'1'.repeat(33)}`;
      for (const id of [unknown, 'cs_short', 'ord_notasession', 'x'.repeat(100)]) {
        for (const r of [await view(id), await status(id), await bind(id)]) {
          assert.deepEqual([r.status, r.body.code], [404, 'session_not_found'], `${id}: ${r.text}`);
          assert.equal(r.text.includes(id), false);
        }
      }
    });

    it('status projection has exactly status, order_id?, order_status?, tx_hash?', async () => {
      const id = await session();
      const before = await status(id);
      assert.deepEqual([before.status, before.body], [200, { status: 'OPEN' }]);
      const b = await bind(id);
      assert.equal(b.status, 200, b.text);
      const after = await status(id);
      assert.deepEqual(after.body, { status: 'BOUND', order_id: b.body.order_id, order_status: 'CHECKOUT_VERIFIED' });
      await markPaymentSeen(s, b.body.order_id);
      assert.deepEqual(Object.keys((await status(id)).body).sort(), ['order_id', 'order_status', 'status', 'tx_hash']);
    });

    it('bind creates the DIRECT order: terms, checkout_id on the order, session BOUND with an audit row', async () => {
      const id = await session({ price: '12.34' });
      const r = await bind(id);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ['amount_wei', 'chain_id', 'expires_at', 'order_id', 'pay_to_address', 'token_contract', 'token_symbol']);
      assert.deepEqual(
        { ...r.body, order_id: undefined, expires_at: undefined },
        {
          order_id: undefined,
          expires_at: undefined,
          chain_id: 31337,
          token_symbol: 'USDC',
          token_contract: USDC,
          pay_to_address: MERCHANT_WALLET,
          amount_wei: '12340000',
        },
      );
      // order TTL (600 s) is shorter than the session's 3600 s: the order window is now + TTL
      assert.equal(r.body.expires_at, Math.floor(s.clock.now() / 1000) + 600);
      const order = (await s.signed(m, 'GET', `/api/v1/orders/${r.body.order_id}`)).body;
      assert.deepEqual([order.status, order.checkout_id, order.dapp_order_id, order.flow, order.from_address], ['CHECKOUT_VERIFIED', id, `checkout:${id}:1`, 'ERC20_DIRECT', PAYER]);
      assert.equal(await sessionStatus(s, id), 'BOUND');
      assert.deepEqual(
        (await sessionTransitions(s, id)).map((t) => `${t.from_status}>${t.to_status}:${t.trigger}`),
        ['null>OPEN:create', 'OPEN>BOUND:bind'],
      );
      const v = (await view(id)).body;
      assert.deepEqual(v.order, { order_id: r.body.order_id, status: 'CHECKOUT_VERIFIED', chain_id: 31337, token_symbol: 'USDC', pay_to_address: MERCHANT_WALLET, amount_wei: '12340000', expires_at: r.body.expires_at });
    });

    it('the order never outlives the session: expires_at = min(session expiry, now + TTL)', async () => {
      const id = await session({ expires_in: 300 });
      const r = await bind(id);
      const sessionExpiry = (await view(id)).body.expires_at;
      assert.equal(r.body.expires_at, sessionExpiry);
    });

    it('the same payer and terms again → the same order; another payer or token → 409', async () => {
      const id = await session();
      const first = await bind(id);
      const n = await countRows(s, 'orders');
      const again = await bind(id, { from_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }); // EIP-55 form of PAYER
      assert.deepEqual([again.status, again.body], [200, first.body]);
      assert.equal(await countRows(s, 'orders'), n, 'no second order');
      for (const other of [{ from_address: PAYER_2 }, { token_symbol: 'USDT' }]) {
        const r = await bind(id, other);
        assert.deepEqual([r.status, r.body.code], [409, 'session_already_bound'], JSON.stringify(other));
      }
      assert.equal(await countRows(s, 'orders'), n);
    });

    it('concurrent binds by two payers: one order, one 200, one 409', async () => {
      const id = await session();
      const n = await countRows(s, 'orders');
      const rs = await Promise.all([bind(id), bind(id, { from_address: PAYER_2 })]);
      assert.deepEqual(rs.map((r) => r.status).sort(), [200, 409]);
      assert.equal(await countRows(s, 'orders'), n + 1);
      const fresh = await session();
      const same = await Promise.all([bind(fresh), bind(fresh), bind(fresh)]);
      assert.deepEqual(
        same.map((r) => r.status),
        [200, 200, 200],
        same.map((r) => r.text).join('\n'),
      );
      assert.equal(new Set(same.map((r) => r.body.order_id)).size, 1, 'one order for the same payer and terms');
    });

    it('the same payer, wallet, token and amount live on another session, unpaid: superseded by the new bind (checkout-returning.test.ts)', async () => {
      const a = await session();
      const price = (amount / 1e6).toFixed(2);
      const b = (await createSession(s, m, { price, line_items_json: undefined })).checkout_id;
      const first = await bind(a);
      assert.equal(first.status, 200);
      const r = await bind(b);
      assert.equal(r.status, 200, r.text);
      assert.equal(await sessionStatus(s, b), 'BOUND');
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${first.body.order_id}`)).body.status, 'EXPIRED');
      const c = (await createSession(s, m, { price, line_items_json: undefined })).checkout_id;
      assert.equal((await bind(c, { from_address: PAYER_2 })).status, 200, 'another payer is attributable');
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${r.body.order_id}`)).body.status, 'CHECKOUT_VERIFIED', 'and supersedes nothing');
    });

    const badBinds: [string, Record<string, unknown>, number, string, string][] = [
      ['an unconfigured chain', { chain_id: 1 }, 400, 'chain_not_supported', 'chain_id'],
      ['a token the session does not offer', { token_symbol: 'DAI' }, 400, 'token_not_supported', 'token_symbol'],
      ['a malformed payer address', { from_address: '0x1234' }, 400, 'invalid_request', 'from_address'],
      ['a bad EIP-55 checksum', { from_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79c8' }, 400, 'invalid_request', 'from_address'],
      ['chain_id as a string', { chain_id: '31337' }, 400, 'invalid_request', 'chain_id'],
      ['an unknown field', { amount_wei: '1' }, 400, 'invalid_request', 'amount_wei'],
    ];
    for (const [name, body, st, code, param] of badBinds) {
      it(`bind refuses ${name} (${st} ${code}) and creates no order`, async () => {
        const id = await session();
        const n = await countRows(s, 'orders');
        const r = await bind(id, body);
        assert.deepEqual([r.status, r.body.code, r.body.param], [st, code, param], r.text);
        assert.equal(await countRows(s, 'orders'), n);
        assert.equal(await sessionStatus(s, id), 'OPEN');
      });
    }

    it('a card-only session cannot be bound for crypto (400 rail_not_enabled)', async () => {
      await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: true });
      const id = await session({ payment_rails: 'fiat', price: undefined, fiat_currency: 'USD', fiat_amount: '5.00' });
      const r = await bind(id);
      assert.deepEqual([r.status, r.body.code], [400, 'rail_not_enabled']);
      assert.deepEqual((await view(id)).body.payment_options, []);
    });

    it('a cancelled order frees the session: the next bind creates order 2 (any payer); audit says rebind', async () => {
      const id = await session();
      const first = await bind(id);
      const c = await s.signed(m, 'POST', `/api/v1/orders/${first.body.order_id}/cancel`, { body: {} });
      assert.equal(c.status, 200, c.text);
      assert.deepEqual((await status(id)).body, { status: 'BOUND', order_id: first.body.order_id, order_status: 'CANCELLED' });
      const second = await bind(id, { from_address: PAYER_2 });
      assert.equal(second.status, 200, second.text);
      assert.notEqual(second.body.order_id, first.body.order_id);
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${second.body.order_id}`)).body.dapp_order_id, `checkout:${id}:2`);
      assert.deepEqual((await status(id)).body, { status: 'BOUND', order_id: second.body.order_id, order_status: 'CHECKOUT_VERIFIED' });
      assert.deepEqual(
        (await sessionTransitions(s, id)).map((t) => t.trigger),
        ['create', 'bind', 'rebind'],
      );
    });

    it('passes the order refusal through: 400 insufficient_fee_balance; the session stays OPEN', async () => {
      const poor = await setupMerchant(s, { topUp: '0', name: 'Poor' });
      const id = (await createSession(s, poor, { line_items_json: undefined })).checkout_id;
      const r = await bind(id);
      assert.deepEqual([r.status, r.body.code], [400, 'insufficient_fee_balance']);
      assert.equal(await sessionStatus(s, id), 'OPEN');
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('an INVOICED order completes its session and emits quickpay.checkout.completed in the same transaction', async () => {
      const id = await session({ client_reference_id: 'cart-complete-1' });
      const b = await bind(id);
      await markPaymentSeen(s, b.body.order_id);
      await inTx((tx) => transitionOrder(tx, { orderId: b.body.order_id, from: 'CHECKOUT_VERIFIED', trigger: 'confirm' }));
      assert.equal((await status(id)).body.status, 'BOUND', 'PAYMENT_CONFIRMED is not completion');
      await inTx((tx) => transitionOrder(tx, { orderId: b.body.order_id, from: 'PAYMENT_CONFIRMED', trigger: 'invoice' }));
      assert.deepEqual((await status(id)).body, { status: 'COMPLETED', order_id: b.body.order_id, order_status: 'INVOICED', tx_hash: `0x${'b'.repeat(64)}` });
      const ev = (await s.db.query<any>(`SELECT event, payload FROM webhook_events WHERE order_id = $1 ORDER BY seq`, [b.body.order_id])).rows;
      assert.deepEqual(
        ev.map((e) => e.event),
        ['order.payment_confirmed', 'order.invoiced', 'quickpay.checkout.completed'],
      );
      assert.deepEqual(ev[2].payload, {
        checkout_id: id,
        order_id: b.body.order_id,
        order_status: 'INVOICED',
        tx_hash: `0x${'b'.repeat(64)}`,
        client_reference_id: 'cart-complete-1',
        line_items: [],
        public_metadata: { campaign: 'spring' },
      });
      const r = await bind(id);
      assert.deepEqual([r.status, r.body.code], [410, 'session_not_payable']);
      assert.equal((await view(id)).body.status, 'COMPLETED');
    });

    it('a FAILED order fails its session; a cancelled session is 410 session_not_payable', async () => {
      const id = await session();
      const b = await bind(id);
      await inTx((tx) => transitionOrder(tx, { orderId: b.body.order_id, from: 'CHECKOUT_VERIFIED', trigger: 'fail' }));
      assert.equal((await status(id)).body.status, 'FAILED');
      assert.deepEqual([(await bind(id)).status, (await bind(id)).body.code], [410, 'session_not_payable']);
      const c = await session();
      await s.db.query(`UPDATE checkout_sessions SET status = 'CANCELLED' WHERE id = $1`, [c]);
      const r = await bind(c);
      assert.deepEqual([r.status, r.body.code], [410, 'session_not_payable']);
      assert.deepEqual([(await status(c)).status, (await status(c)).body], [200, { status: 'CANCELLED' }]);
    });

    it('expiry: reads say EXPIRED at once (200), bind is 410 session_expired, the sweeper persists it', async () => {
      const open = await session({ expires_in: 300 });
      const bound = await session({ expires_in: 300 });
      const paid = await session({ expires_in: 300 });
      const bb = await bind(bound);
      const pb = await bind(paid, { from_address: PAYER_2 });
      await markPaymentSeen(s, pb.body.order_id);
      s.clock.advance(301);
      try {
        for (const id of [open, bound]) {
          assert.deepEqual([(await status(id)).status, (await status(id)).body.status, (await view(id)).body.status], [200, 'EXPIRED', 'EXPIRED']);
          const r = await bind(id);
          assert.deepEqual([r.status, r.body.code], [410, 'session_expired']);
        }
        // The paid one follows its order; a new bind is still refused: the session is past expiry.
        assert.equal((await status(paid)).body.status, 'BOUND');
        assert.deepEqual([(await bind(paid, { from_address: PAYER_2 })).status], [410]);
        await checkoutOf(s.tg.deps).expireDue();
        assert.deepEqual([await sessionStatus(s, open), await sessionStatus(s, bound), await sessionStatus(s, paid)], ['EXPIRED', 'EXPIRED', 'BOUND']);
        assert.deepEqual(
          (await sessionTransitions(s, bound)).map((t) => `${t.from_status}>${t.to_status}`),
          ['null>OPEN', 'OPEN>BOUND', 'BOUND>EXPIRED'],
        );
        // the bound order was not orphaned: it is still reconcilable by its own rules
        assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${bb.body.order_id}`)).body.status, 'CHECKOUT_VERIFIED');
        // the paid session completes when its order is invoiced, after expires_at
        await inTx((tx) => transitionOrder(tx, { orderId: pb.body.order_id, from: 'CHECKOUT_VERIFIED', trigger: 'invoice' }));
        assert.equal(await sessionStatus(s, paid), 'COMPLETED');
        // a payment recorded after the sweep still completes the expired session (reconciled)
        await markPaymentSeen(s, bb.body.order_id);
        await inTx((tx) => transitionOrder(tx, { orderId: bb.body.order_id, from: 'CHECKOUT_VERIFIED', trigger: 'invoice' }));
        assert.equal(await sessionStatus(s, bound), 'COMPLETED');
        assert.deepEqual(
          (await sessionTransitions(s, bound)).map((t) => t.to_status),
          ['OPEN', 'BOUND', 'EXPIRED', 'COMPLETED'],
        );
      } finally {
        s.clock.advance(-301);
      }
    });

    it('less than a minute left: 410 session_not_payable, no order', async () => {
      const id = await session({ expires_in: 300 });
      s.clock.advance(250);
      try {
        const n = await countRows(s, 'orders');
        const r = await bind(id);
        assert.deepEqual([r.status, r.body.code], [410, 'session_not_payable']);
        assert.equal(await countRows(s, 'orders'), n);
      } finally {
        s.clock.advance(-250);
      }
    });
  });
}
