import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StripeSettings } from '../../src/config/secrets.ts';
import { cardsOf } from '../../src/rails/card/index.ts';
import { backends } from '../helpers/db.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { StripeStandIn } from '../helpers/stripe-standin.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { createCardSession, eventsOf, sessionOf, setupCardMerchant, startCard } from './card-fixtures.ts';

const WHSEC = 'whsec_standin0123456789abcdef';

/**
 * The Stripe adapter with the official `stripe` client against a loopback stand-in
 * (helpers/stripe-standin.ts): Checkout Sessions, webhook signatures (valid, tampered, stale,
 * wrong secret), duplicate and out-of-order notifications, reconciliation through the events list
 * after downtime, idempotency keys on every call and idempotent retries of lost answers.
 */
for (const backend of backends()) {
  describe(`card rail, STRIPE adapter against a local stand-in (${backend})`, () => {
    let stripe: StripeStandIn;
    let s: TestServer;
    let m: Creds;
    let hook: string;
    before(async () => {
      stripe = await new StripeStandIn(WHSEC).start();
      s = await startCheckoutServer(backend, {
        config: { card: { processor: 'STRIPE', stripe: new StripeSettings('sk_test_standin', WHSEC, { host: '127.0.0.1', port: stripe.port, protocol: 'http' }, 300) } },
      });
      m = await setupCardMerchant(s);
      hook = `${s.url}/card/v1/notifications/stripe`;
    });
    after(async () => {
      await s?.close();
      await stripe?.close();
    });

    const order = async (id: string) => (await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body;
    const names = async (id: string) => (await eventsOf(s, id)).map(([e]) => e);
    const cardEvents = async () => (await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_events')).rows[0]!.n;
    /** A started Stripe card payment: [checkout id, order id, Stripe Checkout Session id]. */
    async function started(): Promise<[string, string, string]> {
      const { checkout_id } = await createCardSession(s, m);
      const r = await startCard(s, checkout_id);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.flow, 'FIAT_STRIPE');
      assert.equal(r.body.next_action.type, 'redirect');
      const csId = new URL(r.body.next_action.url).pathname.split('/').pop()!;
      return [checkout_id, r.body.order_id, csId];
    }
    async function paid(): Promise<[string, string, string]> {
      const [checkoutId, orderId, csId] = await started();
      for (const e of stripe.pay(csId)) assert.equal((await stripe.deliver(hook, e)).status, 200);
      return [checkoutId, orderId, stripe.sessions.get(csId)!.payment_intent];
    }

    it('start: one Checkout Session per order, created with an idempotency key and the order in its metadata', async () => {
      const [checkoutId, orderId, csId] = await started();
      const creates = stripe.requests.filter((r) => r.path === '/v1/checkout/sessions' && r.body.client_reference_id === orderId);
      assert.equal(creates.length, 1);
      assert.equal(creates[0]!.idempotencyKey, `tollgate-start-${orderId}`);
      assert.deepEqual(creates[0]!.body.metadata, { tollgate_order_id: orderId, tollgate_checkout_id: checkoutId });
      assert.deepEqual(creates[0]!.body.payment_intent_data.metadata, { tollgate_order_id: orderId, tollgate_checkout_id: checkoutId });
      assert.deepEqual(creates[0]!.body.line_items['0'].price_data, { currency: 'eur', unit_amount: '950', product_data: { name: `Order ${orderId}` } });
      const again = await startCard(s, checkoutId);
      assert.equal(again.body.order_id, orderId);
      assert.equal(new URL(again.body.next_action.url).pathname, `/pay/${csId}`);
      assert.equal(stripe.requests.filter((r) => r.path === '/v1/checkout/sessions' && r.body.client_reference_id === orderId).length, 1, 'no second Stripe call');
      assert.equal(await sessionOf(s, checkoutId), 'OPEN');
    });

    it('paid on Stripe: verified notifications → INVOICED, COMPLETED, events once; payment_reference is the PaymentIntent', async () => {
      const [checkoutId, orderId, pi] = await paid();
      const o = await order(orderId);
      assert.deepEqual([o.status, o.payment_reference, o.flow], ['INVOICED', pi, 'FIAT_STRIPE']);
      assert.equal(await sessionOf(s, checkoutId), 'COMPLETED');
      // checkout.session.completed and payment_intent.succeeded report the same payment: one success.
      const evs = await eventsOf(s, orderId);
      assert.deepEqual(
        evs.map(([e]) => e),
        ['fiat.payment.succeeded', 'order.invoiced', 'quickpay.checkout.completed'],
      );
      assert.deepEqual(evs[0]![1], { order_id: orderId, checkout_id: checkoutId, processor: 'STRIPE', payment_reference: pi, currency: 'EUR', amount: '9.50', held: false });
    });

    it('signatures: tampered, stale, wrong secret, missing or malformed header → 400, nothing applied', async () => {
      const [, orderId, csId] = await started();
      const [completed] = stripe.pay(csId);
      const before = await cardEvents();
      const now = Math.floor(s.clock.now() / 1000);
      for (const [what, opts] of [
        ['tampered', { tamper: true }],
        ['stale', { timestamp: now - 301 }],
        ['wrong secret', { secret: 'whsec_someoneelse' }],
        ['malformed header', { header: 't=1,v1=zz' }],
      ] as const) {
        const r = await stripe.deliver(hook, completed!, opts);
        assert.deepEqual([r.status, r.body.code], [400, 'invalid_processor_signature'], what);
      }
      const none = await fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(completed) });
      assert.equal(none.status, 400);
      assert.equal(await cardEvents(), before);
      assert.equal((await order(orderId)).status, 'CHECKOUT_VERIFIED');
      // within the tolerance, the same event verifies
      const ok = await stripe.deliver(hook, completed!, { timestamp: now - 200 });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal((await order(orderId)).status, 'INVOICED');
      // another processor's path is not this deployment's
      const other = await s.request('POST', '/card/v1/notifications/test', { body: {} });
      assert.equal(other.status, 404);
    });

    it('a redelivered event is applied once; a late success after a refund changes nothing', async () => {
      const [, orderId, pi] = await paid();
      const succeeded = stripe.events.find((e) => e.type === 'payment_intent.succeeded' && e.data.object.id === pi)!;
      const again = await stripe.deliver(hook, succeeded);
      assert.deepEqual(again.body.outcomes, ['duplicate']);
      // refund in full through the merchant API: Stripe call with an idempotency key, recorded
      const rf = await s.signed(m, 'POST', `/api/v1/orders/${orderId}/refunds`, { body: {} });
      assert.equal(rf.status, 200, rf.text);
      assert.deepEqual([rf.body.status, rf.body.refunded_amount, rf.body.order_status], ['succeeded', '9.50', 'INVOICED']);
      const call = stripe.requests.filter((r) => r.path === '/v1/refunds').at(-1)!;
      assert.equal(call.idempotencyKey, `tollgate-refund-${rf.body.refund_id}`);
      assert.deepEqual(call.body.metadata, { tollgate_order_id: orderId, tollgate_refund_id: rf.body.refund_id });
      // Stripe's own refund notification arrives afterwards: recognised, not counted twice
      const refundEvent = stripe.events.filter((e) => e.type === 'refund.created').at(-1)!;
      assert.deepEqual((await stripe.deliver(hook, refundEvent)).body.outcomes, ['stale']);
      // a late (re-sent with a new id) payment_intent.succeeded cannot undo the refund
      const late = stripe.emit('payment_intent.succeeded', stripe.intents.get(pi)!);
      assert.deepEqual((await stripe.deliver(hook, late)).body.outcomes, ['stale']);
      const o = await order(orderId);
      assert.deepEqual([o.status, o.refunded_amount], ['INVOICED', '9.50']);
      assert.deepEqual(
        (await names(orderId)).filter((e) => e.startsWith('fiat.')),
        ['fiat.payment.succeeded', 'fiat.payment.refunded'],
      );
    });

    it('out of order before INVOICED: a refund notification overtakes nothing; a failure after success is stale', async () => {
      const [, orderId, csId] = await started();
      const [completed, succeeded] = stripe.pay(csId);
      // payment_intent.succeeded first, then a late payment_failed for the same intent, then the session event
      assert.deepEqual((await stripe.deliver(hook, succeeded!)).body.outcomes, ['succeeded']);
      const failed = stripe.emit('payment_intent.payment_failed', { ...stripe.intents.get(stripe.sessions.get(csId)!.payment_intent)!, status: 'requires_payment_method' });
      assert.deepEqual((await stripe.deliver(hook, failed)).body.outcomes, ['stale']);
      assert.deepEqual((await stripe.deliver(hook, completed!)).body.outcomes, ['stale']);
      assert.equal((await order(orderId)).status, 'INVOICED');
    });

    it('disputes: closed before created (out of order) — the late "created" is stale; lost after INVOICED is recorded, no regress', async () => {
      const [, orderId, pi] = await paid();
      const lost = stripe.dispute(pi, 'lost');
      const created = stripe.dispute(pi, 'created');
      assert.deepEqual((await stripe.deliver(hook, lost)).body.outcomes, ['dispute']);
      assert.deepEqual((await stripe.deliver(hook, created)).body.outcomes, ['stale']);
      const o = await order(orderId);
      assert.deepEqual([o.status, o.dispute_status], ['INVOICED', 'lost']);
      const disputes = (await eventsOf(s, orderId)).filter(([e]) => e === 'fiat.dispute.updated').map(([, p]) => p.dispute_status);
      assert.deepEqual(disputes, ['lost']);
    });

    it('downtime: payments whose notifications never arrived are applied by reconciliation through the events list', async () => {
      const cards = cardsOf(s.tg.deps);
      await cards.reconcile(); // the cursor catches up with everything so far
      const a = await started();
      const b = await started();
      // Tollgate "down": Stripe's notifications are not delivered.
      stripe.pay(a[2]);
      stripe.pay(b[2], 'failed');
      assert.equal((await order(a[1])).status, 'CHECKOUT_VERIFIED');
      const read = await cards.reconcile();
      assert.ok(read >= 3, `read ${read} events`);
      assert.equal((await order(a[1])).status, 'INVOICED');
      assert.equal(await sessionOf(s, a[0]), 'COMPLETED');
      const cp = (await s.db.query<{ state: string; decline_code: string }>('SELECT state, decline_code FROM card_payments WHERE order_id = $1', [b[1]])).rows[0]!;
      assert.deepEqual(cp, { state: 'declined', decline_code: 'generic_decline' });
      // The late deliveries, when Stripe retries them, are recognised by id.
      const late = stripe.events.filter((e) => e.data.object.metadata?.tollgate_order_id === a[1] || e.data.object.id === a[2]);
      for (const e of late) assert.deepEqual((await stripe.deliver(hook, e)).body.outcomes, ['duplicate']);
      assert.equal(await cards.reconcile(), 0, 'nothing new after the cursor');
      assert.deepEqual(
        (await names(a[1])).filter((e) => e === 'order.invoiced'),
        ['order.invoiced'],
      );
    });

    it('lost answers: the client retries with the same idempotency key and Stripe makes one object', async () => {
      stripe.loseAnswers.set('/v1/checkout/sessions', 1);
      const [, orderId] = await started();
      const creates = stripe.requests.filter((r) => r.path === '/v1/checkout/sessions' && r.body.client_reference_id === orderId);
      assert.equal(creates.length, 2, 'the first answer was lost, the client retried');
      assert.equal(new Set(creates.map((c) => c.idempotencyKey)).size, 1);
      assert.equal([...stripe.sessions.values()].filter((x) => x.client_reference_id === orderId).length, 1, 'one Checkout Session');

      const [, paidOrder, pi] = await paid();
      stripe.loseAnswers.set('/v1/refunds', 1);
      const rf = await s.signed(m, 'POST', `/api/v1/orders/${paidOrder}/refunds`, { body: { amount: '1.00' } });
      assert.equal(rf.status, 200, rf.text);
      const calls = stripe.requests.filter((r) => r.path === '/v1/refunds' && r.body.payment_intent === pi);
      assert.equal(calls.length, 2);
      assert.equal(new Set(calls.map((c) => c.idempotencyKey)).size, 1);
      assert.equal([...stripe.refunds.values()].filter((r) => r.payment_intent === pi).length, 1, 'one refund');
      // Every call the adapter made carried an idempotency key (GETs excepted: they are safe).
      assert.deepEqual(
        stripe.requests.filter((r) => r.method === 'POST' && !r.idempotencyKey),
        [],
      );
    });
  });
}
