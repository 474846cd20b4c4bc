import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { PAYER, PAYER_2 } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { CARD, createCardSession, eventsOf, payCard, sessionOf, setupCardMerchant, startCard } from './card-fixtures.ts';

/**
 * The card rail through real HTTP with the TEST processor: starting a card payment on a checkout
 * session, declines and retries, holds (duplicate payment, dispute), release, refunds, disputes
 * after INVOICED, the fee ledger, the cancel refusal, and the 409 / 410 rules.
 */
for (const backend of backends()) {
  describe(`card rail, TEST processor (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
    });
    after(() => s.close());

    const order = async (id: string) => {
      const r = await s.signed(m, 'GET', `/api/v1/orders/${id}`);
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    const names = async (id: string) => (await eventsOf(s, id)).map(([e]) => e);

    it('success card: FIAT_TEST order INVOICED, session COMPLETED, fiat.payment.succeeded then order.invoiced then quickpay.checkout.completed', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const start = await startCard(s, checkout_id);
      assert.equal(start.status, 200, start.text);
      assert.equal(start.body.flow, 'FIAT_TEST');
      assert.equal(start.body.currency, 'EUR');
      assert.equal(start.body.amount, '9.50');
      assert.deepEqual(start.body.next_action, { type: 'card_form' });
      assert.equal(start.body.order_status, 'CHECKOUT_VERIFIED');
      assert.equal(await sessionOf(s, checkout_id), 'OPEN', 'a card session does not pass through BOUND');
      const again = await startCard(s, checkout_id);
      assert.equal(again.body.order_id, start.body.order_id, 'a second start resumes the same order');

      const before = await order(start.body.order_id);
      assert.equal(before.fiat_currency, 'EUR');
      assert.equal(before.fiat_amount, '9.50');
      assert.equal(before.chain_id, 0);
      assert.equal(before.amount_wei, '950');
      assert.match(before.payment_reference, /^tpi_/);

      const paid = await payCard(s, checkout_id, CARD.success);
      assert.equal(paid.status, 200, paid.text);
      assert.equal(paid.body.outcome, 'succeeded');
      assert.equal(paid.body.card_last4, '4242');
      assert.equal(paid.body.order_status, 'INVOICED');
      const o = await order(start.body.order_id);
      assert.equal(o.status, 'INVOICED');
      assert.equal(o.held_reasons, undefined);
      assert.equal(await sessionOf(s, checkout_id), 'COMPLETED');
      const evs = await eventsOf(s, start.body.order_id);
      assert.deepEqual(
        evs.map(([e]) => e),
        ['fiat.payment.succeeded', 'order.invoiced', 'quickpay.checkout.completed'],
      );
      assert.deepEqual(evs[0]![1], { order_id: o.order_id, checkout_id, processor: 'TEST', payment_reference: o.payment_reference, currency: 'EUR', amount: '9.50', held: false });
      const status = await s.request('GET', `/checkout/v1/sessions/${checkout_id}/status`);
      assert.deepEqual(status.body, { status: 'COMPLETED', order_id: o.order_id, order_status: 'INVOICED' });
      // the fee: reserved at the start, captured at INVOICED
      const ledger = (await s.db.query<{ kind: string }>('SELECT kind FROM fee_ledger WHERE order_id = $1 ORDER BY id', [o.order_id])).rows.map((r) => r.kind);
      assert.deepEqual(ledger, ['reserve', 'capture']);
      // a completed session takes no new payment
      assert.equal((await startCard(s, checkout_id)).status, 410);
    });

    it('decline: the order stays CHECKOUT_VERIFIED, nothing invoiced; the payer retries on the same order', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const start = await startCard(s, checkout_id);
      const d = await payCard(s, checkout_id, CARD.decline);
      assert.equal(d.status, 200, d.text);
      assert.deepEqual([d.body.outcome, d.body.decline_code, d.body.order_status], ['declined', 'card_declined', 'CHECKOUT_VERIFIED']);
      const d2 = await payCard(s, checkout_id, CARD.insufficient);
      assert.equal(d2.body.decline_code, 'insufficient_funds');
      assert.deepEqual(await names(start.body.order_id), []);
      assert.equal(await sessionOf(s, checkout_id), 'OPEN');
      assert.equal((await startCard(s, checkout_id)).body.payment_state, 'declined');
      const ok = await payCard(s, checkout_id, CARD.success);
      assert.equal(ok.body.order_status, 'INVOICED');
      assert.equal(ok.body.order_id, start.body.order_id);
    });

    it('duplicate payment: held in PAYMENT_CONFIRMED, fiat.payment.succeeded held:true, no completion until released', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const start = await startCard(s, checkout_id);
      const p = await payCard(s, checkout_id, CARD.duplicate);
      assert.equal(p.status, 200, p.text);
      assert.deepEqual(p.body.held_reasons, ['duplicate_payment']);
      const id = start.body.order_id;
      const o = await order(id);
      assert.equal(o.status, 'PAYMENT_CONFIRMED');
      assert.deepEqual(o.held_reasons, ['duplicate_payment']);
      const evs = await eventsOf(s, id);
      assert.deepEqual(
        evs.map(([e]) => e),
        ['fiat.payment.succeeded', 'fiat.payment.succeeded', 'order.payment_confirmed'],
      );
      assert.ok(evs.slice(0, 2).every(([, pl]) => pl.held === true));
      assert.equal(await sessionOf(s, checkout_id), 'OPEN', 'held: the session stays OPEN, not COMPLETED');
      // the merchant refunds the extra charge; the duplicate hold remains until the operator releases it
      const rf = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '9.50', reason: 'duplicate charge' } });
      assert.equal(rf.status, 200, rf.text);
      assert.deepEqual([rf.body.status, rf.body.amount, rf.body.currency, rf.body.refunded_amount, rf.body.order_status], ['succeeded', '9.50', 'EUR', '9.50', 'PAYMENT_CONFIRMED']);
      assert.deepEqual((await order(id)).held_reasons, ['duplicate_payment']);
      assert.equal((await s.admin('POST', `/admin/v1/orders/${id}/card/release`, { reason: 'dispute' })).status, 409);
      const rel = await s.admin('POST', `/admin/v1/orders/${id}/card/release`, { reason: 'duplicate_payment' });
      assert.equal(rel.status, 200, rel.text);
      assert.equal(rel.body.status, 'INVOICED');
      assert.equal(await sessionOf(s, checkout_id), 'COMPLETED');
      const after = await names(id);
      assert.deepEqual(after.slice(-4), ['fiat.payment.refunded', 'order.refunded', 'order.invoiced', 'quickpay.checkout.completed']);
    });

    it('refunds after INVOICED: recorded with fiat.payment.refunded, the order stays INVOICED; limits refused', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const { body: st } = await startCard(s, checkout_id);
      await payCard(s, checkout_id, CARD.success);
      const part = await s.signed(m, 'POST', `/api/v1/orders/${st.order_id}/refunds`, { body: { amount: '2.00' } });
      assert.equal(part.status, 200, part.text);
      assert.equal(part.body.refunded_amount, '2.00');
      const big = await s.signed(m, 'POST', `/api/v1/orders/${st.order_id}/refunds`, { body: { amount: '8.00' } });
      assert.deepEqual([big.status, big.body.code], [400, 'refund_exceeds_payment']);
      const bad = await s.signed(m, 'POST', `/api/v1/orders/${st.order_id}/refunds`, { body: { amount: '1.234' } });
      assert.deepEqual([bad.status, bad.body.code], [400, 'invalid_amount']);
      const rest = await s.admin('POST', `/admin/v1/orders/${st.order_id}/card/refunds`, { reason: 'goodwill' });
      assert.equal(rest.status, 200, rest.text);
      assert.deepEqual([rest.body.amount, rest.body.refunded_amount, rest.body.requested_by, rest.body.order_status], ['7.50', '9.50', 'operator', 'INVOICED']);
      const again = await s.signed(m, 'POST', `/api/v1/orders/${st.order_id}/refunds`, { body: {} });
      assert.deepEqual([again.status, again.body.code], [400, 'card_order_not_refundable']);
      const o = await order(st.order_id);
      assert.deepEqual([o.status, o.refunded_amount], ['INVOICED', '9.50']);
      const refunded = (await eventsOf(s, st.order_id)).filter(([e]) => e === 'fiat.payment.refunded').map(([, p]) => [p.amount, p.refunded_total]);
      assert.deepEqual(refunded, [
        ['2.00', '2.00'],
        ['7.50', '9.50'],
      ]);
      // another merchant cannot see or refund it
      const other = await setupCardMerchant(s);
      const r = await s.signed(other, 'POST', `/api/v1/orders/${st.order_id}/refunds`, { body: {} });
      assert.deepEqual([r.status, r.body.code], [404, 'order_not_found']);
    });

    it('an unpaid crypto order is not refundable (the route takes refunds of every rail: docs/refunds.md)', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const bind = await s.request('POST', `/checkout/v1/sessions/${checkout_id}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER } });
      assert.equal(bind.status, 200, bind.text);
      const r = await s.signed(m, 'POST', `/api/v1/orders/${bind.body.order_id}/refunds`, { body: {} });
      assert.deepEqual([r.status, r.body.code], [409, 'order_not_refundable']);
    });

    it('dispute after INVOICED: recorded and notified, the order does not regress; a late "opened" changes nothing', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const { body: st } = await startCard(s, checkout_id);
      await payCard(s, checkout_id, CARD.success);
      for (const scenario of ['dispute_opened', 'dispute_lost', 'dispute_opened']) {
        const r = await s.admin('POST', `/admin/v1/orders/${st.order_id}/card/simulate`, { scenario });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.order.status, 'INVOICED');
      }
      const o = await order(st.order_id);
      assert.deepEqual([o.status, o.dispute_status, o.held_reasons], ['INVOICED', 'lost', undefined]);
      const disputes = (await eventsOf(s, st.order_id)).filter(([e]) => e === 'fiat.dispute.updated').map(([, p]) => [p.dispute_status, p.order_status]);
      assert.deepEqual(disputes, [
        ['opened', 'INVOICED'],
        ['lost', 'INVOICED'],
      ]);
    });

    it('dispute before INVOICED holds the order; won releases it (INVOICED); lost would fail it', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const { body: st } = await startCard(s, checkout_id);
      const p = await payCard(s, checkout_id, CARD.disputed);
      assert.deepEqual([p.body.order_status, p.body.held_reasons], ['PAYMENT_CONFIRMED', ['dispute']]);
      assert.ok(!(await names(st.order_id)).includes('order.invoiced'));
      const won = await s.admin('POST', `/admin/v1/orders/${st.order_id}/card/simulate`, { scenario: 'dispute_won' });
      assert.equal(won.body.order.status, 'INVOICED');
      assert.equal(await sessionOf(s, checkout_id), 'COMPLETED');

      const b = await createCardSession(s, m);
      const { body: st2 } = await startCard(s, b.checkout_id);
      await payCard(s, b.checkout_id, CARD.disputed);
      const lost = await s.admin('POST', `/admin/v1/orders/${st2.order_id}/card/simulate`, { scenario: 'dispute_lost' });
      assert.deepEqual([lost.body.order.status, lost.body.order.failure_reason], ['FAILED', 'card dispute lost before the order was invoiced']);
      assert.equal(await sessionOf(s, b.checkout_id), 'FAILED');
      const ledger = (await s.db.query<{ kind: string }>('SELECT kind FROM fee_ledger WHERE order_id = $1 ORDER BY id', [st2.order_id])).rows.map((r) => r.kind);
      assert.deepEqual(ledger, ['reserve', 'release']);
    });

    it('delayed payment: processing keeps the session OPEN past its expiry; the operator completes it', async () => {
      const { checkout_id, expires_at } = await createCardSession(s, m, { expires_in: 300 });
      const { body: st } = await startCard(s, checkout_id);
      const p = await payCard(s, checkout_id, CARD.delayed);
      assert.deepEqual([p.body.outcome, p.body.order_status], ['processing', 'CHECKOUT_VERIFIED']);
      const busy = await payCard(s, checkout_id, CARD.success);
      assert.deepEqual([busy.status, busy.body.code], [409, 'card_payment_active']);
      s.clock.ms = (expires_at + 60) * 1000;
      await s.tg.deps.orders.expireDue();
      const { checkoutOf } = await import('../../src/checkout/service.ts');
      await checkoutOf(s.tg.deps).expireDue();
      const { cardsOf } = await import('../../src/rails/card/index.ts');
      await cardsOf(s.tg.deps).expireDue();
      assert.equal(await sessionOf(s, checkout_id), 'OPEN');
      assert.equal((await order(st.order_id)).status, 'CHECKOUT_VERIFIED');
      const done = await s.admin('POST', `/admin/v1/orders/${st.order_id}/card/simulate`, { scenario: 'succeeded' });
      assert.equal(done.body.order.status, 'INVOICED');
      assert.equal(await sessionOf(s, checkout_id), 'COMPLETED');
      s.clock.ms = Date.now();
    });

    it('an unpaid card order expires with its session (fee released)', async () => {
      const { checkout_id, expires_at } = await createCardSession(s, m, { expires_in: 300 });
      const { body: st } = await startCard(s, checkout_id);
      s.clock.ms = (expires_at + 1) * 1000;
      const { cardsOf } = await import('../../src/rails/card/index.ts');
      assert.equal(await cardsOf(s.tg.deps).expireDue(), 1);
      assert.equal((await order(st.order_id)).status, 'EXPIRED');
      s.clock.ms = Date.now();
    });

    it('a payment reported after the order expired: recorded, fiat.payment.succeeded held:true, nothing invoiced', async () => {
      const { checkout_id, expires_at } = await createCardSession(s, m, { expires_in: 300 });
      const { body: st } = await startCard(s, checkout_id);
      s.clock.ms = (expires_at + 1) * 1000;
      const { cardsOf } = await import('../../src/rails/card/index.ts');
      await cardsOf(s.tg.deps).expireDue();
      const late = await s.admin('POST', `/admin/v1/orders/${st.order_id}/card/simulate`, { scenario: 'succeeded' });
      assert.equal(late.body.order.status, 'EXPIRED');
      const evs = await eventsOf(s, st.order_id);
      assert.deepEqual(
        evs.map(([e]) => e),
        ['order.expired', 'fiat.payment.succeeded'],
      );
      assert.equal(evs[1]![1].held, true);
      // the merchant refunds it
      const rf = await s.signed(m, 'POST', `/api/v1/orders/${st.order_id}/refunds`, { body: {} });
      assert.deepEqual([rf.status, rf.body.status, rf.body.order_status], [200, 'succeeded', 'EXPIRED']);
      s.clock.ms = Date.now();
    });

    it('cancel is refused for card orders in every state (400 card_order_not_cancellable)', async () => {
      const { checkout_id } = await createCardSession(s, m);
      const { body: st } = await startCard(s, checkout_id);
      const cancel = () => s.signed(m, 'POST', `/api/v1/orders/${st.order_id}/cancel`, { body: {} });
      let r = await cancel();
      assert.deepEqual([r.status, r.body.code], [400, 'card_order_not_cancellable']);
      await payCard(s, checkout_id, CARD.duplicate);
      r = await cancel();
      assert.deepEqual([r.status, r.body.code], [400, 'card_order_not_cancellable']);
      await s.admin('POST', `/admin/v1/orders/${st.order_id}/card/release`, { reason: 'duplicate_payment' });
      r = await cancel();
      assert.deepEqual([r.status, r.body.code], [400, 'card_order_not_cancellable']);
    });

    it('409 when a crypto payment is live for the session, and a crypto bind is refused while the card order is live', async () => {
      const a = await createCardSession(s, m);
      const bind = await s.request('POST', `/checkout/v1/sessions/${a.checkout_id}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER_2 } });
      assert.equal(bind.status, 200, bind.text);
      const r = await startCard(s, a.checkout_id);
      assert.deepEqual([r.status, r.body.code], [409, 'card_payment_active']);

      const b = await createCardSession(s, m);
      assert.equal((await startCard(s, b.checkout_id)).status, 200);
      const bind2 = await s.request('POST', `/checkout/v1/sessions/${b.checkout_id}/bind`, { body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER_2 } });
      assert.equal(bind2.status, 409, bind2.text);
    });

    it('410 with too little time left or an expired session; 400 without the fiat rail; 404 unknown session', async () => {
      const { checkout_id, expires_at } = await createCardSession(s, m, { expires_in: 300 });
      s.clock.ms = (expires_at - 100) * 1000;
      let r = await startCard(s, checkout_id);
      assert.deepEqual([r.status, r.body.code], [410, 'session_not_payable']);
      s.clock.ms = (expires_at + 1) * 1000;
      r = await startCard(s, checkout_id);
      assert.deepEqual([r.status, r.body.code], [410, 'session_expired']);
      s.clock.ms = Date.now();
      const crypto = await createCardSession(s, m, { payment_rails: 'crypto', fiat_currency: undefined, fiat_amount: undefined });
      r = await startCard(s, crypto.checkout_id);
      assert.deepEqual([r.status, r.body.code], [400, 'rail_not_enabled']);
      r = await startCard(s, 'cs_unknown');
      assert.deepEqual([r.status, r.body.code], [404, 'session_not_found']);
    });

    it('card-only session; insufficient fee balance refuses the start and writes nothing', async () => {
      const poor = await setupCardMerchant(s, '0');
      const { checkout_id } = await createCardSession(s, poor, { payment_rails: 'fiat', price: undefined, line_items_json: undefined, fiat_currency: 'JPY', fiat_amount: '1500' });
      const r = await startCard(s, checkout_id);
      assert.deepEqual([r.status, r.body.code], [400, 'insufficient_fee_balance']);
      const n = (await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE checkout_id = $1', [checkout_id])).rows[0]!.n;
      assert.equal(n, 0);
      await s.admin('POST', `/admin/v1/merchants/${poor.merchantId}/fee-balance/top-ups`, { amount: '1.00' });
      const ok = await startCard(s, checkout_id);
      assert.deepEqual([ok.status, ok.body.currency, ok.body.amount], [200, 'JPY', '1500']);
      assert.equal((await payCard(s, checkout_id, CARD.success)).body.order_status, 'INVOICED');
    });

    it('the reusable start (quick-pay builds on it): an order without a session, resumed by its dapp_order_id', async () => {
      const { cardsOf } = await import('../../src/rails/card/index.ts');
      const cards = cardsOf(s.tg.deps);
      const req = { merchantId: m.merchantId, dappOrderId: `qp-${Date.now()}`, currency: 'USD', amount: '3.00', expiresAt: new Date(s.clock.now() + 600_000), returnUrl: 'https://pay.example/q' };
      const a = await cards.startCardPayment(req);
      assert.equal(a.kind, 'started');
      const b = await cards.startCardPayment(req);
      assert.ok(a.kind === 'started' && b.kind === 'started');
      assert.deepEqual([b.created, b.start.order_id, b.start.amount, b.start.currency], [false, a.start.order_id, '3.00', 'USD']);
      for (const [bad, code] of [
        [{ currency: 'XXX' }, 'invalid_request'],
        [{ amount: '1.234' }, 'invalid_amount'],
        [{ amount: '0' }, 'invalid_amount'],
      ] as const) {
        const r = await cards.startCardPayment({ ...req, dappOrderId: `${req.dappOrderId}-x`, ...bad });
        assert.equal(r.kind === 'refused' && r.code, code, JSON.stringify(bad));
      }
      const o = await order(a.start.order_id);
      assert.deepEqual([o.flow, o.amount_wei, o.checkout_id], ['FIAT_TEST', '300', undefined]);
    });

    it('test card input: invalid numbers and expired cards are refused without echoing the number', async () => {
      const { checkout_id } = await createCardSession(s, m);
      await startCard(s, checkout_id);
      const r = await payCard(s, checkout_id, '4242 4242 4242 4241');
      assert.deepEqual([r.status, r.body.code, r.body.param], [400, 'invalid_request', 'number']);
      assert.ok(!r.text.includes('4241'));
      const exp = await s.request('POST', `/checkout/v1/sessions/${checkout_id}/card/test-payment`, { body: { number: CARD.success, exp_month: 1, exp_year: 2001, cvc: '123' } });
      assert.deepEqual([exp.status, exp.body.code], [400, 'invalid_request']);
      const unknown = await payCard(s, checkout_id, '4111 1111 1111 1111');
      assert.deepEqual([unknown.body.outcome, unknown.body.decline_code], ['declined', 'test_card_unknown']);
    });
  });
}
