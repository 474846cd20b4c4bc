import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isId } from '@tollgate/protocol';
import { backends } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { cardsOf } from '../../src/rails/card/index.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { CARD, createCardSession, eventsOf, setupCardMerchant } from './card-fixtures.ts';

/**
 * Card quick-pay through real HTTP and the TEST processor: a link offering `card` next to crypto,
 * a card session (its FIAT_TEST order), the TEST card form's route, COMPLETED on INVOICED with
 * `quickpay.checkout.completed` once, and a held (duplicate) payment that completes nothing until
 * the operator releases it. A payment the processor is still processing when the session's window
 * ends keeps the session OPEN (never EXPIRED) until the processor answers: COMPLETED on success,
 * FAILED on a decline.
 */
for (const backend of backends()) {
  describe(`quick-pay card rail (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let linkId: string;
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Espresso cup', price: '9.99', fiat_currency: 'EUR', fiat_amount: '9.50' } });
      assert.equal(p.status, 200, p.text);
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, payment_rails: 'crypto,card' } });
      assert.equal(l.status, 200, l.text);
      assert.deepEqual(l.body.payment_rails, ['crypto', 'card']);
      linkId = l.body.link_id;
    });
    after(() => s.close());

    const open = (body: Record<string, unknown> = {}) => s.request('POST', `/quickpay/v1/links/${linkId}/sessions`, { body: { rail: 'card', ...body } });
    const pay = (sessionId: string, number: string) => s.request('POST', `/quickpay/v1/sessions/${sessionId}/card/test-payment`, { body: { number, exp_month: 12, exp_year: 2099, cvc: '123' } });
    const status = async (sessionId: string) => (await s.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body;
    const completions = async (orderId: string) => (await eventsOf(s, orderId)).filter(([e]) => e === 'quickpay.checkout.completed');

    it("the public link offers card; a link cannot offer card without the merchant's card rail or a fiat price", async () => {
      const pub = await s.request('GET', `/quickpay/v1/links/${linkId}`);
      assert.equal(pub.status, 200, pub.text);
      assert.deepEqual(pub.body.payment_rails, ['crypto', 'card']);
      const noFiat = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Crypto only', price: '1.00' } });
      const r = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: noFiat.body.product_id, payment_rails: 'card' } });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'invalid_amount');
      const plain = await setupMerchant(s, { name: 'No card' });
      const p = await s.signed(plain, 'POST', '/api/v1/products', { body: { name: 'X', fiat_currency: 'EUR', fiat_amount: '1.00' } });
      const r2 = await s.signed(plain, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, payment_rails: 'card' } });
      assert.equal(r2.status, 400, r2.text);
      assert.equal(r2.body.code, 'rail_not_enabled');
    });

    it('success: FIAT_TEST order; declined card keeps it OPEN; success → order INVOICED, session COMPLETED, quickpay.checkout.completed once', async () => {
      const r = await open({ memo: 'table 4', idempotency_key: 'card-1' });
      assert.equal(r.status, 200, r.text);
      assert.ok(isId('qps', r.body.session_id));
      assert.equal(r.body.status, 'OPEN');
      assert.equal(r.body.rail, 'card');
      assert.equal(r.body.amount, '9.50');
      assert.deepEqual(
        { ...r.body.terms, order_id: undefined, expires_at: undefined },
        { order_id: undefined, expires_at: undefined, checkout_id: r.body.session_id, processor: 'TEST', currency: 'EUR', amount: '9.50', amount_minor: '950', payment_state: 'pending', next_action: { type: 'card_form' } },
      );
      const sid: string = r.body.session_id;
      const oid: string = r.body.order_id;
      const order = await s.signed(m, 'GET', `/api/v1/orders/${oid}`);
      assert.equal(order.body.flow, 'FIAT_TEST');
      assert.equal(order.body.dapp_order_id, `quickpay:${sid}`);
      // a double click returns the same session
      const again = await open({ memo: 'table 4', idempotency_key: 'card-1' });
      assert.equal(again.body.session_id, sid);
      assert.equal(again.body.order_id, oid);

      const declined = await pay(sid, CARD.decline);
      assert.equal(declined.status, 200, declined.text);
      assert.equal(declined.body.outcome, 'declined');
      assert.equal((await status(sid)).status, 'OPEN');

      const ok = await pay(sid, CARD.success);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual([ok.body.outcome, ok.body.order_status, ok.body.card_last4], ['succeeded', 'INVOICED', '4242']);
      const st = await status(sid);
      assert.deepEqual([st.status, st.order_status], ['COMPLETED', 'INVOICED']);
      const done = await completions(oid);
      assert.equal(done.length, 1);
      const payload = done[0]![1];
      assert.deepEqual([payload.checkout_id, payload.session_id, payload.rail, payload.order_status, payload.amount, payload.memo], [sid, sid, 'card', 'INVOICED', '9.50', 'table 4']);
      // a settled session answers its status only, and takes no second payment
      const settled = await open({ memo: 'table 4', idempotency_key: 'card-1' });
      assert.deepEqual([settled.body.status, settled.body.terms], ['COMPLETED', undefined]);
      const twice = await pay(sid, CARD.success);
      assert.equal(twice.status, 410, twice.text);
      assert.equal((await completions(oid)).length, 1);
    });

    it('duplicate charge: held, session stays OPEN and no quickpay.checkout.completed until the operator releases it', async () => {
      const r = await open();
      assert.equal(r.status, 200, r.text);
      const sid: string = r.body.session_id;
      const oid: string = r.body.order_id;
      const p = await pay(sid, CARD.duplicate);
      assert.equal(p.status, 200, p.text);
      assert.deepEqual([p.body.order_status, p.body.held_reasons], ['PAYMENT_CONFIRMED', ['duplicate_payment']]);
      assert.deepEqual([(await status(sid)).status, (await status(sid)).order_status], ['OPEN', 'PAYMENT_CONFIRMED']);
      assert.equal((await completions(oid)).length, 0);
      const rel = await s.admin('POST', `/admin/v1/orders/${oid}/card/release`, { reason: 'duplicate_payment' });
      assert.equal(rel.status, 200, rel.text);
      const st = await status(sid);
      assert.deepEqual([st.status, st.order_status], ['COMPLETED', 'INVOICED']);
      assert.equal((await completions(oid)).length, 1);
    });

    const simulate = (orderId: string, scenario: string) => s.admin('POST', `/admin/v1/orders/${orderId}/card/simulate`, { scenario });
    /** Past the session's window, with every expiry sweeper run (card orders, checkout, orders). */
    async function pastWindow(expiresAt: number) {
      s.clock.advance(expiresAt - Math.floor(s.clock.now() / 1000) + 60);
      await cardsOf(s.tg.deps).expireDue();
      await s.tg.deps.orders.expireDue();
    }

    it('processing when the window ends: OPEN, not EXPIRED, until the processor answers; its success → COMPLETED, completion once', async () => {
      const r = await open({ idempotency_key: 'slow-1' });
      assert.equal(r.status, 200, r.text);
      const sid: string = r.body.session_id;
      const oid: string = r.body.order_id;
      assert.deepEqual([r.body.terms.payment_state, r.body.terms.next_action], ['pending', { type: 'card_form' }]);
      const p = await pay(sid, CARD.delayed);
      assert.deepEqual([p.status, p.body.outcome], [200, 'processing'], p.text);
      await pastWindow(r.body.expires_at);
      const st = await status(sid);
      assert.deepEqual([st.status, st.order_status, st.terms?.payment_state], ['OPEN', 'CHECKOUT_VERIFIED', 'processing'], 'still processing: shown open, terms say so');
      // The same request again (a reload) gets the open session back, not a status-only EXPIRED.
      const again = await open({ idempotency_key: 'slow-1' });
      assert.deepEqual([again.body.session_id, again.body.status, again.body.terms?.payment_state], [sid, 'OPEN', 'processing']);
      // No second payment on it: the card form refuses while the processor has the payment.
      assert.notEqual((await pay(sid, CARD.success)).status, 200);
      assert.equal((await completions(oid)).length, 0);
      const done = await simulate(oid, 'succeeded');
      assert.equal(done.status, 200, done.text);
      const end = await status(sid);
      assert.deepEqual([end.status, end.order_status, end.terms], ['COMPLETED', 'INVOICED', undefined]);
      assert.equal((await completions(oid)).length, 1);
      const rec = (await s.signed(m, 'GET', `/api/v1/payment-links/${linkId}/sessions`)).body.data.find((x: { session_id: string }) => x.session_id === sid);
      assert.deepEqual([rec.status, rec.order_status], ['COMPLETED', 'INVOICED']);
    });

    it('processing when the window ends, then declined: the session ends FAILED (not EXPIRED), the order FAILED with its reason, nothing completed', async () => {
      const r = await open();
      const sid: string = r.body.session_id;
      const oid: string = r.body.order_id;
      assert.equal((await pay(sid, CARD.delayed)).body.outcome, 'processing');
      await pastWindow(r.body.expires_at);
      assert.equal((await status(sid)).status, 'OPEN');
      const no = await simulate(oid, 'declined');
      assert.equal(no.status, 200, no.text);
      const st = await status(sid);
      assert.deepEqual([st.status, st.order_status], ['FAILED', 'FAILED']);
      const o = await s.signed(m, 'GET', `/api/v1/orders/${oid}`);
      assert.equal(o.body.status, 'FAILED');
      assert.equal((await completions(oid)).length, 0);
      assert.equal((await eventsOf(s, oid)).filter(([e]) => e === 'order.invoiced').length, 0);
    });

    it('within the window a processing payment that is declined leaves the session OPEN for another card; unpaid past the window it is EXPIRED', async () => {
      const r = await open();
      const sid: string = r.body.session_id;
      const oid: string = r.body.order_id;
      assert.equal((await pay(sid, CARD.delayed)).body.outcome, 'processing');
      assert.equal((await simulate(oid, 'declined')).status, 200);
      const st = await status(sid);
      assert.deepEqual([st.status, st.order_status, st.terms.payment_state], ['OPEN', 'CHECKOUT_VERIFIED', 'declined']);
      // Nobody pays again: past the window the session is EXPIRED, its order too.
      await pastWindow(r.body.expires_at);
      const end = await status(sid);
      assert.deepEqual([end.status, end.order_status], ['EXPIRED', 'EXPIRED']);
    });

    it('one rail, two names: fiat is accepted for card on links and sessions, card for fiat on checkout sessions; each surface answers in its own word', async () => {
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Alias cup', price: '2.00', fiat_currency: 'EUR', fiat_amount: '1.90' } });
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, payment_rails: 'fiat,crypto' } });
      assert.equal(l.status, 200, l.text);
      assert.deepEqual(l.body.payment_rails, ['card', 'crypto'], 'stored and answered as card, in the order given');
      const first = await s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { rail: 'fiat', idempotency_key: 'alias-1' } });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.rail, 'card');
      const retry = await s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { rail: 'card', idempotency_key: 'alias-1' } });
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.body.session_id, first.body.session_id, 'the same request under the other name is an idempotent retry, not a second session');
      const twice = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, payment_rails: 'card,fiat' } });
      assert.equal(twice.status, 400, twice.text);
      assert.equal(twice.body.code, 'invalid_request');
      const cs = await createCardSession(s, m, { payment_rails: 'crypto,card' });
      const view = await s.request('GET', `/checkout/v1/sessions/${cs.checkout_id}`);
      assert.equal(view.status, 200, view.text);
      assert.deepEqual(view.body.payment_rails, ['crypto', 'fiat'], "a checkout session answers in the interface's word");
    });

    it('a crypto session has no card order to pay; an unknown session is 404', async () => {
      const c = await s.request('POST', `/quickpay/v1/links/${linkId}/sessions`, { body: { rail: 'crypto', chain_id: 31337, token_symbol: 'USDC', from_address: '0x0000000000000000000000000000000000001234' } });
      assert.equal(c.status, 200, c.text);
      const r = await pay(c.body.session_id, CARD.success);
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.code, 'session_not_found');
      assert.equal((await pay('qps_nope', CARD.success)).status, 404);
    });
  });
}
