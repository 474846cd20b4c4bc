import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SESSION_STATUSES, SESSION_TRANSITIONS, effectiveStatus, isExpiredAt, isLiveOrder, isPayable, nextSessionStatus, sessionSourcesOf, sessionTargetOf, sessionTriggerForOrder, type SessionTrigger } from '../../src/checkout/states.ts';
import { ORDER_STATUSES } from '../../src/orders/states.ts';

const TRIGGERS: SessionTrigger[] = ['bind', 'rebind', 'complete', 'fail', 'expire', 'cancel'];

describe('checkout session state machine', () => {
  it('every trigger has one target whatever its source (one conditional UPDATE serves them all)', () => {
    for (const t of TRIGGERS) {
      for (const from of SESSION_STATUSES) {
        const to = nextSessionStatus(from, t);
        if (to !== undefined) assert.equal(to, sessionTargetOf(t), `${t} from ${from}`);
      }
    }
  });

  it('the legal moves are exactly the documented ones', () => {
    const moves = SESSION_STATUSES.flatMap((from) => TRIGGERS.filter((t) => nextSessionStatus(from, t)).map((t) => `${from}-${t}->${nextSessionStatus(from, t)}`));
    assert.deepEqual(moves.sort(), [
      'BOUND-cancel->CANCELLED',
      'BOUND-complete->COMPLETED',
      'BOUND-expire->EXPIRED',
      'BOUND-fail->FAILED',
      'BOUND-rebind->BOUND',
      'EXPIRED-complete->COMPLETED',
      'OPEN-bind->BOUND',
      'OPEN-cancel->CANCELLED',
      'OPEN-complete->COMPLETED',
      'OPEN-expire->EXPIRED',
      'OPEN-fail->FAILED',
    ]);
  });

  it('SIGNED is a compatibility value only: nothing leads to it and nothing leaves it', () => {
    assert.deepEqual(SESSION_TRANSITIONS.SIGNED, {});
    for (const t of TRIGGERS) assert.notEqual(sessionTargetOf(t), 'SIGNED');
    assert.equal(isPayable('SIGNED'), false);
  });

  it('COMPLETED, FAILED and CANCELLED are final', () => {
    for (const s of ['COMPLETED', 'FAILED', 'CANCELLED'] as const) for (const t of TRIGGERS) assert.equal(nextSessionStatus(s, t), undefined, `${t} from ${s}`);
  });

  it('sources of a trigger are the statuses whose row has it', () => {
    assert.deepEqual(sessionSourcesOf('complete'), ['OPEN', 'BOUND', 'EXPIRED']);
    assert.deepEqual(sessionSourcesOf('bind'), ['OPEN']);
    assert.deepEqual(sessionSourcesOf('rebind'), ['BOUND']);
    assert.deepEqual(sessionSourcesOf('expire'), ['OPEN', 'BOUND']);
  });

  it('only INVOICED completes a session and only FAILED fails it; PAYMENT_CONFIRMED is not completion', () => {
    const map = Object.fromEntries(ORDER_STATUSES.map((s) => [s, sessionTriggerForOrder(s)]));
    assert.deepEqual(map, {
      CHECKOUT_VERIFIED: undefined,
      PAYMENT_CONFIRMED: undefined,
      INVOICED: 'complete',
      FAILED: 'fail',
      EXPIRED: undefined,
      CANCELLED: undefined,
    });
  });

  it('payable statuses and live orders', () => {
    assert.deepEqual(SESSION_STATUSES.filter(isPayable), ['OPEN', 'BOUND']);
    assert.deepEqual(ORDER_STATUSES.filter(isLiveOrder), ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED']);
  });
});

describe('session expiry (isExpiredAt / effectiveStatus)', () => {
  const expiresAt = new Date(1_000_000);
  const before = 999_999;
  const at = 1_000_000;
  const cases: [string, Parameters<typeof isExpiredAt>[0]['status'], Parameters<typeof isExpiredAt>[1], number, boolean][] = [
    ['OPEN before expiry', 'OPEN', undefined, before, false],
    ['OPEN at expiry', 'OPEN', undefined, at, true],
    ['BOUND with no order', 'BOUND', undefined, at, true],
    ['BOUND to a live unpaid order', 'BOUND', { status: 'CHECKOUT_VERIFIED', paymentSeen: false }, at, true],
    ['BOUND to an expired order', 'BOUND', { status: 'EXPIRED', paymentSeen: false }, at, true],
    ['BOUND to a cancelled order', 'BOUND', { status: 'CANCELLED', paymentSeen: false }, at, true],
    ['BOUND to an order whose payment was seen', 'BOUND', { status: 'CHECKOUT_VERIFIED', paymentSeen: true }, at, false],
    ['BOUND to a PAYMENT_CONFIRMED order', 'BOUND', { status: 'PAYMENT_CONFIRMED', paymentSeen: true }, at + 10_000_000, false],
    ['BOUND to a live unpaid order before expiry', 'BOUND', { status: 'CHECKOUT_VERIFIED', paymentSeen: false }, before, false],
    ['COMPLETED long after expiry', 'COMPLETED', { status: 'INVOICED', paymentSeen: true }, at * 10, false],
    ['CANCELLED after expiry', 'CANCELLED', undefined, at, false],
  ];
  for (const [name, status, order, now, expired] of cases) {
    it(`${name}: ${expired ? 'expired' : 'not expired'}`, () => {
      assert.equal(isExpiredAt({ status, expiresAt }, order, now), expired);
      assert.equal(effectiveStatus({ status, expiresAt }, order, now), expired ? 'EXPIRED' : status);
    });
  }
});
