import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CREATED_SKEW_MS, LATE_LOOKBACK_MS, decideMatch, type ClosedCandidate, type LiveCandidate } from '../../src/chain/evm/matching.ts';

const T0 = Date.parse('2025-06-01T12:00:00Z');
const at = (sec: number) => new Date(T0 + sec * 1000);

function live(id: string, amountWei: bigint, o: { createdSec?: number; expiresSec?: number } = {}): LiveCandidate {
  return { id, amountWei, createdAt: at(o.createdSec ?? -60), expiresAt: at(o.expiresSec ?? 600) };
}
const closed = (id: string, createdSec: number): ClosedCandidate => ({ id, createdAt: at(createdSec) });
const transfer = (value: bigint, blockSec = 0) => ({ value, blockTime: at(blockSec) });

describe('decideMatch', () => {
  it('matches an exact payment', () => {
    assert.deepEqual(decideMatch(transfer(10n), [live('a', 10n)], []), { kind: 'matched', orderId: 'a' });
  });

  it('picks the largest amount that fits (best fit), not the oldest', () => {
    const cs = [live('small', 5n, { createdSec: -300 }), live('fit', 10n, { createdSec: -10 }), live('big', 20n, { createdSec: -400 })];
    assert.deepEqual(decideMatch(transfer(12n), cs, []), { kind: 'matched', orderId: 'fit' });
  });

  it('breaks an amount tie by age, then by id', () => {
    assert.deepEqual(decideMatch(transfer(10n), [live('new', 10n, { createdSec: -1 }), live('old', 10n, { createdSec: -100 })], []), { kind: 'matched', orderId: 'old' });
    assert.deepEqual(decideMatch(transfer(10n), [live('b', 10n), live('a', 10n)], []), { kind: 'matched', orderId: 'a' });
  });

  it('never lets a transfer pay an order created after it (beyond the clock-skew allowance)', () => {
    const skewSec = CREATED_SKEW_MS / 1000;
    // Mined 3 minutes before the order existed: not its payment (catch-up after downtime).
    assert.deepEqual(decideMatch(transfer(10n), [live('later', 10n, { createdSec: skewSec + 60 })], []), { kind: 'unmatched' });
    // Nor does it count as an under-payment of that order, or shadow an order that existed.
    assert.deepEqual(decideMatch(transfer(5n), [live('later', 10n, { createdSec: skewSec + 1 })], []), { kind: 'unmatched' });
    assert.deepEqual(decideMatch(transfer(10n), [live('later', 10n, { createdSec: skewSec + 1 }), live('earlier', 8n)], []), { kind: 'matched', orderId: 'earlier' });
    // Within the allowance (the chain's clock trailing the gateway's): a payment.
    assert.deepEqual(decideMatch(transfer(10n), [live('a', 10n, { createdSec: skewSec })], []), { kind: 'matched', orderId: 'a' });
    assert.deepEqual(decideMatch(transfer(10n), [live('a', 10n, { createdSec: 1 })], []), { kind: 'matched', orderId: 'a' });
  });

  it('treats an over-payment as a match', () => {
    assert.deepEqual(decideMatch(transfer(1_000n), [live('a', 10n)], []), { kind: 'matched', orderId: 'a' });
  });

  it('accepts a block mined exactly at expires_at and calls one after it late', () => {
    assert.deepEqual(decideMatch(transfer(10n, 600), [live('a', 10n)], []), { kind: 'matched', orderId: 'a' });
    assert.deepEqual(decideMatch(transfer(10n, 601), [live('a', 10n)], []), { kind: 'late', orderId: 'a' });
  });

  it('does not let an expired-but-unswept order shadow a live one that fits', () => {
    const cs = [live('expired', 10n, { expiresSec: -1 }), live('ok', 8n)];
    assert.deepEqual(decideMatch(transfer(10n), cs, []), { kind: 'matched', orderId: 'ok' });
  });

  it('prefers late-against-a-fit over under-paid', () => {
    const cs = [live('expired', 10n, { expiresSec: -1 }), live('bigger', 20n)];
    assert.deepEqual(decideMatch(transfer(10n), cs, []), { kind: 'late', orderId: 'expired' });
  });

  it('records an under-payment against the oldest order asking more', () => {
    const cs = [live('young', 30n, { createdSec: -5 }), live('old', 20n, { createdSec: -50 })];
    assert.deepEqual(decideMatch(transfer(7n), cs, []), { kind: 'underpaid', orderId: 'old' });
  });

  it('an under-payment beats a closed order: the live order is what the payer saw', () => {
    assert.deepEqual(decideMatch(transfer(7n), [live('a', 10n)], [closed('x', -10)]), { kind: 'underpaid', orderId: 'a' });
  });

  it('records a payment to a recently closed order as late, against the newest one', () => {
    assert.deepEqual(decideMatch(transfer(10n), [], [closed('older', -3600), closed('newer', -60)]), { kind: 'late', orderId: 'newer' });
  });

  it('ignores closed orders older than the look-back window', () => {
    const old = -LATE_LOOKBACK_MS / 1000 - 1;
    assert.deepEqual(decideMatch(transfer(10n), [], [closed('ancient', old)]), { kind: 'unmatched' });
    assert.deepEqual(decideMatch(transfer(10n), [], [closed('edge', old + 1)]), { kind: 'late', orderId: 'edge' });
  });

  it('is unmatched with no candidates at all', () => {
    assert.deepEqual(decideMatch(transfer(10n), [], []), { kind: 'unmatched' });
  });
});
