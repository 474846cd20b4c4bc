import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CARD_PAYMENT_STATES, HOLD_REASONS, isHoldReason, mayMove, mayMoveDispute, rankOf, withHold, withoutHold, DISPUTE_STATUSES } from '../../src/rails/card/states.ts';
import { last4, luhnValid, normalizeCardNumber, TEST_CARDS } from '../../src/rails/card/test/cards.ts';
import { opaqueAddress, toMinor } from '../../src/rails/card/service.ts';
import { normalizeStripeEvent } from '../../src/rails/card/stripe/events.ts';
import { stripeExpiry } from '../../src/rails/card/stripe/processor.ts';
import { cardReturnUrl, nextActionOf } from '../../src/rails/card/port.ts';

test('payment states: moves only to an equal or higher rank; refunded is final', () => {
  const table: Record<string, string[]> = {};
  for (const from of CARD_PAYMENT_STATES) table[from] = CARD_PAYMENT_STATES.filter((to) => mayMove(from, to));
  assert.deepEqual(table, {
    pending: ['pending', 'processing', 'declined', 'succeeded', 'refunded'],
    processing: ['processing', 'declined', 'succeeded', 'refunded'],
    declined: ['processing', 'declined', 'succeeded', 'refunded'],
    succeeded: ['succeeded', 'refunded'],
    refunded: [],
  });
  assert.ok(rankOf('refunded') > rankOf('succeeded'));
});

test('disputes: opened → won | lost, final; a late opened is refused', () => {
  const table: Record<string, string[]> = { none: DISPUTE_STATUSES.filter((to) => mayMoveDispute(null, to)) };
  for (const from of DISPUTE_STATUSES) table[from] = DISPUTE_STATUSES.filter((to) => mayMoveDispute(from, to));
  assert.deepEqual(table, { none: ['opened', 'won', 'lost'], opened: ['won', 'lost'], won: [], lost: [] });
});

test('hold reasons: sorted, unique, unknown values dropped', () => {
  assert.deepEqual(HOLD_REASONS, ['duplicate_payment', 'conflict', 'refund', 'dispute', 'balance']);
  assert.deepEqual(withHold(['refund'], 'dispute'), ['dispute', 'refund']);
  assert.deepEqual(withHold(['dispute', 'bogus'], 'dispute'), ['dispute']);
  assert.deepEqual(withHold(null, 'balance'), ['balance']);
  assert.deepEqual(withoutHold(['dispute', 'refund'], 'dispute'), ['refund']);
  assert.deepEqual(withoutHold(undefined, 'dispute'), []);
  assert.equal(isHoldReason('conflict'), true);
  assert.equal(isHoldReason('CONFLICT'), false);
});

test('test cards: every listed number passes Luhn; normalization; last four only', () => {
  for (const n of Object.keys(TEST_CARDS)) assert.ok(luhnValid(n), n);
  assert.equal(normalizeCardNumber('4242 4242-4242 4242'), '4242424242424242');
  assert.equal(normalizeCardNumber('4242424242424241'), undefined, 'Luhn');
  assert.equal(normalizeCardNumber('42424242'), undefined, 'too short');
  assert.equal(normalizeCardNumber('4242x42424242424'), undefined);
  assert.equal(last4('4000000000000002'), '0002');
});

test('toMinor: exact decimal → minor units; refuses extra digits and non-decimals', () => {
  assert.equal(toMinor('9.50', 2), 950n);
  assert.equal(toMinor('9.5', 2), 950n);
  assert.equal(toMinor('1500', 0), 1500n);
  assert.equal(toMinor('0.001', 3), 1n);
  assert.equal(toMinor('123456789012345678901234567890.12', 2), 12345678901234567890123456789012n);
  for (const bad of ['1.234', '-1', '1e3', '', '.5', '1.']) assert.throws(() => toMinor(bad, 2), bad);
});

test('opaqueAddress: a lowercase 20-byte hex value, stable per order, distinct across orders', () => {
  assert.match(opaqueAddress('ord_a'), /^0x[0-9a-f]{40}$/);
  assert.equal(opaqueAddress('ord_a'), opaqueAddress('ord_a'));
  assert.notEqual(opaqueAddress('ord_a'), opaqueAddress('ord_b'));
});

test('Stripe events normalize to card events; unrelated types and unpaid sessions do not succeed', () => {
  const ev = (type: string, object: object) => ({ id: 'evt_1', created: 10, type, data: { object } }) as never;
  const md = { tollgate_order_id: 'ord_1' };
  assert.deepEqual(normalizeStripeEvent(ev('payment_intent.succeeded', { id: 'pi_1', amount: 950, amount_received: 950, currency: 'eur', metadata: md })), [
    { id: 'evt_1', created: 10, orderId: 'ord_1', paymentReference: 'pi_1', amountMinor: 950n, currency: 'eur', type: 'payment.succeeded' },
  ]);
  assert.equal(normalizeStripeEvent(ev('checkout.session.completed', { payment_intent: 'pi_1', payment_status: 'unpaid', metadata: md, amount_total: 950, currency: 'eur' }))[0]!.type, 'payment.processing');
  assert.deepEqual(normalizeStripeEvent(ev('checkout.session.completed', { payment_intent: null, payment_status: 'unpaid', metadata: md })), []);
  assert.equal(normalizeStripeEvent(ev('payment_intent.payment_failed', { id: 'pi_1', amount: 950, currency: 'eur', metadata: md, last_payment_error: { decline_code: 'insufficient_funds' } }))[0]!.declineCode, 'insufficient_funds');
  const refund = (status: string) => normalizeStripeEvent(ev('refund.updated', { id: 're_1', payment_intent: 'pi_1', amount: 100, currency: 'eur', status, metadata: { tollgate_refund_id: 'rf_1' } }));
  assert.deepEqual(
    refund('succeeded').map((e) => [e.type, e.refundId, e.refundKey, e.amountMinor]),
    [['refund.succeeded', 're_1', 'rf_1', 100n]],
  );
  assert.deepEqual(refund('pending'), []);
  assert.equal(refund('canceled')[0]!.type, 'refund.failed');
  const dispute = (type: string, status: string) => normalizeStripeEvent(ev(type, { id: 'dp_1', payment_intent: 'pi_1', amount: 950, currency: 'eur', status }))[0]?.type;
  assert.equal(dispute('charge.dispute.created', 'needs_response'), 'dispute.opened');
  assert.equal(dispute('charge.dispute.closed', 'won'), 'dispute.won');
  assert.equal(dispute('charge.dispute.closed', 'lost'), 'dispute.lost');
  assert.equal(dispute('charge.dispute.closed', 'warning_closed'), undefined);
  assert.deepEqual(normalizeStripeEvent(ev('customer.created', { id: 'cus_1' })), []);
});

test('next action from what the start stored; the return URLs keep the fragment and mark the outcome', () => {
  assert.deepEqual(nextActionOf({ redirect_url: null }), { type: 'card_form' });
  assert.deepEqual(nextActionOf({ redirect_url: 'https://checkout.stripe.com/c/pay/cs_1' }), { type: 'redirect', url: 'https://checkout.stripe.com/c/pay/cs_1' });
  assert.equal(cardReturnUrl('https://pay.example/checkout/pay#cs_9x', 'paid'), 'https://pay.example/checkout/pay?card_return=paid#cs_9x');
  assert.equal(cardReturnUrl('https://pay.example/tg/quickpay/pay/pl_1?x=1#qps_2', 'cancelled'), 'https://pay.example/tg/quickpay/pay/pl_1?x=1&card_return=cancelled#qps_2');
});

test('Stripe Checkout expires_at: the order window, within 35 min and 23 h of the order creation (stable for a retried start)', () => {
  const created = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(created.getTime() + s * 1000);
  const base = created.getTime() / 1000;
  assert.equal(stripeExpiry(at(600), created), base + 35 * 60, "a 10-minute window: Stripe's 30-minute floor (+5 for a retry)");
  assert.equal(stripeExpiry(at(3600), created), base + 3600);
  assert.equal(stripeExpiry(at(3 * 86_400), created), base + 23 * 3600);
  assert.equal(stripeExpiry(at(3600), created), stripeExpiry(at(3600), created));
});
