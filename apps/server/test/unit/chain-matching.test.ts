import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHAIN_CLOCK_SKEW_MS, LATE_LOOKBACK_MS, decideMatch, withinTolerance, type Candidate } from '../../src/chain/evm/matching.ts';

const T0 = Date.parse('2025-06-01T12:00:00Z');
const at = (sec: number) => new Date(T0 + sec * 1000);

type Opts = { createdSec?: number; expiresSec?: number; toleranceBps?: number };
function cand(state: Candidate['state'], id: string, amountWei: bigint, o: Opts = {}): Candidate {
  return { id, amountWei, state, createdAt: at(o.createdSec ?? -60), expiresAt: at(o.expiresSec ?? 600), toleranceBps: o.toleranceBps ?? 0 };
}
const live = (id: string, amountWei: bigint, o: Opts = {}) => cand('open', id, amountWei, o);
const closed = (id: string, createdSec: number, amountWei = 999n) => cand('closed', id, amountWei, { createdSec, expiresSec: createdSec + 600 });
const paid = (id: string, amountWei: bigint, o: Opts = {}) => cand('paid', id, amountWei, o);
const transfer = (value: bigint, blockSec = 0) => ({ value, blockTime: at(blockSec) });

describe('decideMatch', () => {
  it('matches an exact payment', () => {
    assert.deepEqual(decideMatch(transfer(10n), [live('a', 10n)]), { kind: 'matched', orderId: 'a' });
  });

  it('picks the largest amount that fits (best fit), not the oldest', () => {
    const cs = [live('small', 5n, { createdSec: -300 }), live('fit', 10n, { createdSec: -10 }), live('big', 20n, { createdSec: -400 })];
    assert.deepEqual(decideMatch(transfer(12n), cs), { kind: 'matched', orderId: 'fit' });
  });

  it('breaks an amount tie by age, then by id', () => {
    assert.deepEqual(decideMatch(transfer(10n), [live('new', 10n, { createdSec: -1 }), live('old', 10n, { createdSec: -100 })]), { kind: 'matched', orderId: 'old' });
    assert.deepEqual(decideMatch(transfer(10n), [live('b', 10n), live('a', 10n)]), { kind: 'matched', orderId: 'a' });
  });

  it('never lets a transfer pay an order created after it (beyond the clock-skew allowance)', () => {
    const skewSec = CHAIN_CLOCK_SKEW_MS / 1000;
    // Mined 3 minutes before the order existed: not its payment (catch-up after downtime).
    assert.deepEqual(decideMatch(transfer(10n), [live('later', 10n, { createdSec: skewSec + 60 })]), { kind: 'unmatched' });
    // Nor does it count as an under-payment of that order, or shadow an order that existed.
    assert.deepEqual(decideMatch(transfer(5n), [live('later', 10n, { createdSec: skewSec + 1 })]), { kind: 'unmatched' });
    assert.deepEqual(decideMatch(transfer(10n), [live('later', 10n, { createdSec: skewSec + 1 }), live('earlier', 8n)]), { kind: 'matched', orderId: 'earlier' });
    // Within the allowance (the chain's clock trailing the gateway's): a payment.
    assert.deepEqual(decideMatch(transfer(10n), [live('a', 10n, { createdSec: skewSec })]), { kind: 'matched', orderId: 'a' });
    assert.deepEqual(decideMatch(transfer(10n), [live('a', 10n, { createdSec: 1 })]), { kind: 'matched', orderId: 'a' });
    // The same holds for closed and paid orders: exact terms of a later order are not its payment.
    assert.deepEqual(decideMatch(transfer(10n), [cand('closed', 'c', 10n, { createdSec: skewSec + 60 }), live('ok', 8n)]), { kind: 'matched', orderId: 'ok' });
  });

  it('treats an over-payment as a match when no order has the exact amount', () => {
    assert.deepEqual(decideMatch(transfer(1_000n), [live('a', 10n)]), { kind: 'matched', orderId: 'a' });
  });

  it('accepts a block mined exactly at expires_at and calls one after it late', () => {
    assert.deepEqual(decideMatch(transfer(10n, 600), [live('a', 10n)]), { kind: 'matched', orderId: 'a' });
    assert.deepEqual(decideMatch(transfer(10n, 601), [live('a', 10n)]), { kind: 'late', orderId: 'a' });
  });

  it('does not let an expired-but-unswept order shadow a live one that fits, unless it has the exact amount', () => {
    assert.deepEqual(decideMatch(transfer(12n), [live('expired', 10n, { expiresSec: -1 }), live('ok', 8n)]), { kind: 'matched', orderId: 'ok' });
    // The exact terms of the expired order: recorded against it as late, the live order untouched.
    assert.deepEqual(decideMatch(transfer(10n), [live('expired', 10n, { expiresSec: -1 }), live('ok', 8n)]), { kind: 'late', orderId: 'expired' });
  });

  it('prefers late-against-a-fit over under-paid', () => {
    const cs = [live('expired', 10n, { expiresSec: -1 }), live('bigger', 20n)];
    assert.deepEqual(decideMatch(transfer(12n), cs), { kind: 'late', orderId: 'expired' });
  });

  it('records an under-payment against the oldest order asking more', () => {
    const cs = [live('young', 30n, { createdSec: -5 }), live('old', 20n, { createdSec: -50 })];
    assert.deepEqual(decideMatch(transfer(7n), cs), { kind: 'underpaid', orderId: 'old' });
  });

  it('an under-payment beats a closed order of another amount: the live order is what the payer saw', () => {
    assert.deepEqual(decideMatch(transfer(7n), [live('a', 10n), closed('x', -10, 12n)]), { kind: 'underpaid', orderId: 'a' });
  });

  it('records a non-exact payment to a recently closed order as late, against the newest one', () => {
    assert.deepEqual(decideMatch(transfer(10n), [closed('older', -3600), closed('newer', -60)]), { kind: 'late', orderId: 'newer' });
  });

  it('ignores closed orders of another amount older than the look-back window', () => {
    const old = -LATE_LOOKBACK_MS / 1000 - 1;
    assert.deepEqual(decideMatch(transfer(10n), [closed('ancient', old)]), { kind: 'unmatched' });
    assert.deepEqual(decideMatch(transfer(10n), [closed('edge', old + 1)]), { kind: 'late', orderId: 'edge' });
  });

  it('is unmatched with no candidates at all', () => {
    assert.deepEqual(decideMatch(transfer(10n), []), { kind: 'unmatched' });
  });
});

describe('decideMatch: an exact match in any state wins (issue 12)', () => {
  it('the reported bug: A 0.50 live, B 1.00 cancelled, 1.00 paid with B’s terms → late on B, A untouched', () => {
    const cs = [live('A', 500_000n), closed('B', -30, 1_000_000n)];
    assert.deepEqual(decideMatch(transfer(1_000_000n), cs), { kind: 'late', orderId: 'B' });
  });

  it('an exact match on a closed order beats an over-payment whatever the look-back', () => {
    const ancient = -LATE_LOOKBACK_MS / 1000 - 3600;
    assert.deepEqual(decideMatch(transfer(10n), [live('small', 5n), closed('old', ancient, 10n)]), { kind: 'late', orderId: 'old' });
  });

  it('live beats closed: the live exact order is paid, not the cancelled one with the same amount', () => {
    assert.deepEqual(decideMatch(transfer(10n), [closed('gone', -30, 10n), live('open', 10n)]), { kind: 'matched', orderId: 'open' });
  });

  it('a second exact payment of a paid order is a duplicate against it, never an over-payment of another', () => {
    assert.deepEqual(decideMatch(transfer(10n), [live('other', 5n), paid('done', 10n)]), { kind: 'duplicate', orderId: 'done' });
  });

  it('a closed exact order beats a paid exact one (the unpaid terms are the ones still owed); newest among several', () => {
    assert.deepEqual(decideMatch(transfer(10n), [paid('done', 10n, { createdSec: -10 }), closed('c1', -500, 10n), closed('c2', -100, 10n)]), { kind: 'late', orderId: 'c2' });
  });

  it('repeated candidates (merged look-ups) count once', () => {
    const b = closed('B', -30, 10n);
    assert.deepEqual(decideMatch(transfer(10n), [b, b, live('A', 5n)]), { kind: 'late', orderId: 'B' });
  });
});

describe('decideMatch: under-payment tolerance', () => {
  it('counts a payment short by no more than the tolerance as paid', () => {
    assert.deepEqual(decideMatch(transfer(995n), [live('a', 1_000n, { toleranceBps: 50 })]), { kind: 'matched', orderId: 'a' });
    assert.deepEqual(decideMatch(transfer(994n), [live('a', 1_000n, { toleranceBps: 50 })]), { kind: 'underpaid', orderId: 'a' });
  });

  it('default 0: any shortfall is an under-payment', () => {
    assert.deepEqual(decideMatch(transfer(999n), [live('a', 1_000n)]), { kind: 'underpaid', orderId: 'a' });
  });

  it('a tolerated under-payment beats an over-payment of a smaller order of the same payer', () => {
    assert.deepEqual(decideMatch(transfer(995n), [live('small', 500n), live('meant', 1_000n, { toleranceBps: 100 })]), { kind: 'matched', orderId: 'meant' });
  });

  it('an exact match beats a tolerated one; among tolerated, the closest amount', () => {
    assert.deepEqual(decideMatch(transfer(995n), [live('tol', 1_000n, { toleranceBps: 100 }), closed('exact', -30, 995n)]), { kind: 'late', orderId: 'exact' });
    assert.deepEqual(decideMatch(transfer(990n), [live('far', 1_000n, { toleranceBps: 1000 }), live('near', 995n, { toleranceBps: 1000 })]), { kind: 'matched', orderId: 'near' });
  });

  it('does not apply to an order that had expired at the block time', () => {
    assert.deepEqual(decideMatch(transfer(995n), [live('a', 1_000n, { toleranceBps: 100, expiresSec: -1 })]), { kind: 'underpaid', orderId: 'a' });
  });

  it('withinTolerance is exact integer arithmetic at the bounds', () => {
    assert.equal(withinTolerance(1_000n, 1_000n, 0), true);
    assert.equal(withinTolerance(1_001n, 1_000n, 0), true);
    assert.equal(withinTolerance(999n, 1_000n, 0), false);
    assert.equal(withinTolerance(900n, 1_000n, 1000), true);
    assert.equal(withinTolerance(899n, 1_000n, 1000), false);
    // 1 bps of 9_999 is 0.9999: a shortfall of 1 is over it.
    assert.equal(withinTolerance(9_998n, 9_999n, 1), false);
    assert.equal(withinTolerance(9_999n, 10_000n, 1), true);
  });
});
