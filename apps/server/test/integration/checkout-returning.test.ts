import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, PAYER, PAYER_2, setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { createSession, markPaymentSeen, sessionStatus, startCheckoutServer } from './checkout-fixtures.ts';

/**
 * Returning payers (orders/supersede.ts): a payer who left an unpaid checkout or quick-pay session
 * and comes back through a new session with the same price gets a new order; the earlier one is
 * superseded (EXPIRED, audit trigger `supersede`) in the same transaction. Orders the merchant made
 * through the API, and orders with a payment seen, are never superseded: 409 order_conflict, whose
 * merchant-API message names the blocking order.
 */
for (const backend of backends()) {
  describe(`returning payers: a new session supersedes the payer's own unpaid one (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let cents = 300;
    /** A fresh price per test: tests never share live terms. */
    const price = () => ((cents += 7) / 100).toFixed(2);
    const amountWei = (p: string) => String(Math.round(Number(p) * 100) * 10_000);
    const session = async (p: string) => (await createSession(s, m, { price: p, line_items_json: undefined })).checkout_id;
    const bind = (id: string, from = PAYER) => s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: from } });
    const order = (id: string) => s.signed(m, 'GET', `/api/v1/orders/${id}`).then((r) => r.body);
    const transitions = (orderId: string) => s.db.query<{ to_status: string; trigger: string; detail: any }>('SELECT to_status, trigger, detail FROM order_transitions WHERE order_id = $1 ORDER BY id', [orderId]).then((r) => r.rows);
    const liveWithTerms = (amount: string, from = PAYER) => s.db.query<{ id: string }>(`SELECT id FROM orders WHERE amount_wei = $1 AND from_address = $2 AND status = 'CHECKOUT_VERIFIED'`, [amount, from]).then((r) => r.rows.map((x) => x.id));

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupMerchant(s);
    });
    after(() => s.close());

    it('a new checkout session with the same payer and price binds; the earlier order is EXPIRED (supersede), its session shows it', async () => {
      const p = price();
      const first = await session(p);
      const earlier = await bind(first);
      assert.equal(earlier.status, 200, earlier.text);
      const fee = (await s.db.query<{ reserved: string }>('SELECT reserved::text FROM fee_accounts WHERE merchant_id = $1', [m.merchantId])).rows[0]!.reserved;

      const second = await session(p);
      const now = await bind(second);
      assert.equal(now.status, 200, now.text);
      assert.notEqual(now.body.order_id, earlier.body.order_id);
      assert.deepEqual(await liveWithTerms(amountWei(p)), [now.body.order_id], 'exactly one live order with these terms');

      const old = await order(earlier.body.order_id);
      assert.deepEqual([old.status, old.checkout_id], ['EXPIRED', first]);
      const moves = await transitions(earlier.body.order_id);
      assert.deepEqual(
        moves.map((t) => `${t.to_status}:${t.trigger}`),
        ['CHECKOUT_VERIFIED:create', 'EXPIRED:supersede'],
      );
      assert.deepEqual(moves[1]!.detail, { superseded_by: now.body.order_id });
      // The merchant hears of it like of any expiry; the earlier session keeps following its order.
      const events = (await s.db.query<{ event: string }>('SELECT event FROM webhook_events WHERE order_id = $1', [earlier.body.order_id])).rows.map((e) => e.event);
      assert.ok(events.includes('order.expired'), events.join(','));
      assert.equal(await sessionStatus(s, first), 'BOUND');
      assert.deepEqual((await s.request('GET', `/checkout/v1/sessions/${first}/status`)).body, { status: 'BOUND', order_id: earlier.body.order_id, order_status: 'EXPIRED' });
      // One fee reserved for one live order: the superseded order's fee was released.
      assert.equal((await s.db.query<{ reserved: string }>('SELECT reserved::text FROM fee_accounts WHERE merchant_id = $1', [m.merchantId])).rows[0]!.reserved, fee);
      assert.deepEqual(await findLedgerImbalances(s.db), []);

      // Back on the first tab: a new bind there supersedes the second session's order in turn.
      const back = await bind(first);
      assert.equal(back.status, 200, back.text);
      assert.deepEqual(await liveWithTerms(amountWei(p)), [back.body.order_id]);
      assert.equal((await order(now.body.order_id)).status, 'EXPIRED');
    });

    it('another payer is not affected, and the same session bound again returns its own live order (no supersede)', async () => {
      const p = price();
      const a = await session(p);
      const mine = await bind(a);
      const other = await bind(await session(p), PAYER_2);
      assert.equal(other.status, 200, other.text);
      const again = await bind(a);
      assert.deepEqual([again.status, again.body.order_id], [200, mine.body.order_id]);
      assert.equal((await order(mine.body.order_id)).status, 'CHECKOUT_VERIFIED');
      assert.equal((await order(other.body.order_id)).status, 'CHECKOUT_VERIFIED');
    });

    it('an order the merchant created through the API is never superseded: the bind is 409 order_conflict naming no order', async () => {
      const p = price();
      const api = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(p) }) });
      assert.equal(api.status, 402, api.text);
      const r = await bind(await session(p));
      assert.deepEqual([r.status, r.body.code], [409, 'order_conflict'], r.text);
      assert.equal(r.text.includes(api.body.order_id), false, 'a public answer names no order of the merchant');
      assert.equal((await order(api.body.order_id)).status, 'CHECKOUT_VERIFIED');
      assert.deepEqual(await liveWithTerms(amountWei(p)), [api.body.order_id]);
    });

    it('a session order with a payment seen is never superseded (409), and nothing changes', async () => {
      const p = price();
      const paying = await bind(await session(p));
      await markPaymentSeen(s, paying.body.order_id);
      const r = await bind(await session(p));
      assert.deepEqual([r.status, r.body.code], [409, 'order_conflict'], r.text);
      assert.equal((await order(paying.body.order_id)).status, 'CHECKOUT_VERIFIED');
      assert.deepEqual(
        (await transitions(paying.body.order_id)).map((t) => t.trigger),
        ['create'],
      );
    });

    it('merchant API: order_conflict names the blocking order and how to release it; after cancelling it the order is created', async () => {
      const p = price();
      const first = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(p) }) });
      assert.equal(first.status, 402, first.text);
      const clash = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(p) }) });
      assert.deepEqual([clash.status, clash.body.code, clash.body.param], [409, 'order_conflict', 'amount_wei']);
      const id = first.body.order_id as string;
      assert.match(clash.body.error, new RegExp(`order ${id} \\(expires [0-9T:.-]+Z\\); cancel it \\(POST /api/v1/orders/${id}/cancel\\) or wait for its expiry`));
      assert.equal((await order(id)).status, 'CHECKOUT_VERIFIED', 'the API never supersedes');
      // A session order blocking the merchant's own create is named too, and not superseded by it.
      const q = price();
      const bound = await bind(await session(q));
      const blocked = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(q) }) });
      assert.deepEqual([blocked.status, blocked.body.code], [409, 'order_conflict']);
      assert.ok(blocked.body.error.includes(`order ${bound.body.order_id}`), blocked.body.error);
      assert.equal((await order(bound.body.order_id)).status, 'CHECKOUT_VERIFIED');
      // Released as the message says: cancel, then create again.
      assert.equal((await s.signed(m, 'POST', `/api/v1/orders/${id}/cancel`)).status, 200);
      assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(p) }) })).status, 402);
    });

    it('another merchant sharing the pay-to wallet: the conflict is refused without naming its order', async () => {
      const p = price();
      const other = await setupMerchant(s, { name: 'Other Merchant' });
      const theirs = await s.signed(other, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(p) }) });
      assert.equal(theirs.status, 402, theirs.text);
      const clash = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: amountWei(p) }) });
      assert.deepEqual([clash.status, clash.body.code], [409, 'order_conflict']);
      assert.equal(clash.text.includes(theirs.body.order_id), false);
      // …nor superseded by this merchant's session.
      const r = await bind(await session(p));
      assert.deepEqual([r.status, r.body.code], [409, 'order_conflict']);
      assert.equal((await s.signed(other, 'GET', `/api/v1/orders/${theirs.body.order_id}`)).body.status, 'CHECKOUT_VERIFIED');
    });

    it('concurrent binds of new sessions by the returning payer: all answered, exactly one live order, no 500', async () => {
      const p = price();
      const earlier = await bind(await session(p));
      assert.equal(earlier.status, 200);
      const ids = await Promise.all([session(p), session(p), session(p)]);
      const rs = await Promise.all([...ids.map((id) => bind(id)), bind(ids[0]!)]);
      assert.deepEqual(
        rs.map((r) => r.status),
        [200, 200, 200, 200],
        rs.map((r) => r.text).join('\n'),
      );
      const live = await liveWithTerms(amountWei(p));
      assert.equal(live.length, 1, 'exactly one live order');
      assert.ok(
        rs.some((r) => r.body.order_id === live[0]),
        'the live order is one a bind answered',
      );
      // Each answer is an order of the session it bound (the same session bound twice at once gets
      // one order, or a second one when another bind superseded its first meanwhile).
      const owners = await Promise.all(rs.map(async (r) => (await order(r.body.order_id)).checkout_id));
      assert.deepEqual(owners, [...ids, ids[0]]);
      const { rows } = await s.db.query<{ status: string; trigger: string }>(`SELECT o.status, t.trigger FROM orders o JOIN order_transitions t ON t.order_id = o.id AND t.from_status IS NOT NULL WHERE o.amount_wei = $1`, [amountWei(p)]);
      assert.ok(rows.length >= 1 && rows.every((r) => r.status === 'EXPIRED' && r.trigger === 'supersede'), JSON.stringify(rows));
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('quick-pay: the payer opens a new session on the link after leaving one unpaid; the earlier one is superseded and shows EXPIRED', async () => {
      const p = price();
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '100' } });
      assert.equal(l.status, 200, l.text);
      const open = () => s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER, amount: p } });
      const first = await open();
      assert.equal(first.status, 200, first.text);
      const second = await open();
      assert.equal(second.status, 200, second.text);
      assert.notEqual(second.body.terms.order_id, first.body.terms.order_id);
      const old = await order(first.body.terms.order_id);
      assert.equal(old.status, 'EXPIRED');
      assert.deepEqual(
        (await transitions(old.order_id)).map((t) => `${t.to_status}:${t.trigger}`),
        ['CHECKOUT_VERIFIED:create', 'EXPIRED:supersede'],
      );
      assert.equal((await s.request('GET', `/quickpay/v1/sessions/${first.body.session_id}`)).body.status, 'EXPIRED');
      assert.equal((await s.request('GET', `/quickpay/v1/sessions/${second.body.session_id}`)).body.status, 'OPEN');
      // A checkout session with the same price and payer supersedes a quick-pay attempt too.
      const cs = await bind(await session(p));
      assert.equal(cs.status, 200, cs.text);
      assert.equal((await order(second.body.terms.order_id)).status, 'EXPIRED');
    });

    it('quick-pay: the returning payer’s own unpaid session holds no slot against them (max_payments, inventory); another payer is still refused', async () => {
      const pr = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Last seat', price: price(), inventory: 1 } });
      assert.equal(pr.status, 200, pr.text);
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: pr.body.product_id, max_payments: 1 } });
      assert.equal(l.status, 200, l.text);
      const open = (from: string, amount?: string) => s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: from, ...(amount ? { amount } : {}) } });
      const first = await open(PAYER);
      assert.equal(first.status, 200, first.text);
      const again = await open(PAYER, `${pr.body.price}0`); // the same amount written otherwise
      assert.equal(again.status, 200, again.text);
      assert.equal((await order(first.body.terms.order_id)).status, 'EXPIRED');
      const other = await open(PAYER_2);
      assert.deepEqual([other.status, other.body.code], [410, 'link_sold_out'], other.text);
      const viaUsdt = await s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: 31337, token_symbol: 'USDT', from_address: PAYER } });
      assert.deepEqual([viaUsdt.status, viaUsdt.body.code], [410, 'link_sold_out'], 'other terms supersede nothing, so the slot is held');
    });
  });
}
