import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatUnits, isDecimalString } from '../../src/lib/money.ts';

test('formatUnits: exact decimal strings, trimmed to two fractional digits at least', () => {
  const cases: [string, number, string][] = [
    ['9990000', 6, '9.99'],
    ['10000000', 6, '10.00'],
    ['1', 6, '0.000001'],
    ['0', 6, '0.00'],
    ['123456789', 6, '123.456789'],
    ['100000', 6, '0.10'],
    ['5', 0, '5'],
    ['5', 1, '0.5'],
    ['50', 1, '5.0'],
    ['000123', 2, '1.23'],
    ['1000000000000000001', 18, '1.000000000000000001'],
    // Far beyond Number.MAX_SAFE_INTEGER: a float would round here.
    ['123456789012345678901234567890', 6, '123456789012345678901234.56789'],
    ['115792089237316195423570985008687907853269984665640564039457584007913129639935', 18, '115792089237316195423570985008687907853269984665640564039457.584007913129639935'],
  ];
  for (const [amount, decimals, want] of cases) assert.equal(formatUnits(amount, decimals), want, `${amount}/${decimals}`);
});

test('formatUnits: bigint input and minFraction', () => {
  assert.equal(formatUnits(1_100_000n, 6), '1.10');
  assert.equal(formatUnits(1_100_000n, 6, 0), '1.1');
  assert.equal(formatUnits(1_000_000n, 6, 0), '1');
  assert.equal(formatUnits(1_000_000n, 6, 4), '1.0000');
});

test('formatUnits: never a float artifact (0.1 + 0.2 style)', () => {
  for (let i = 0n; i < 2000n; i += 7n) {
    const s = formatUnits(i * 100_003n, 6);
    assert.match(s, /^\d+\.\d{2,6}$/);
    // round trip: the string parses back to exactly the same integer
    const [int, frac = ''] = s.split('.');
    assert.equal(BigInt(int! + frac.padEnd(6, '0')), i * 100_003n);
  }
});

test('formatUnits rejects what is not a non-negative integer amount', () => {
  for (const bad of ['', '-1', '1.5', '1e6', '0x10', ' 1', 'abc']) assert.throws(() => formatUnits(bad, 6), RangeError, bad);
  assert.throws(() => formatUnits('1', -1), RangeError);
  assert.throws(() => formatUnits('1', 1.5), RangeError);
  assert.throws(() => formatUnits('1', 78), RangeError);
});

test('isDecimalString', () => {
  for (const ok of ['0', '9.99', '10', '0.000001']) assert.equal(isDecimalString(ok), true, ok);
  for (const bad of ['', '.5', '5.', '-1', '1e3', 9.99, null]) assert.equal(isDecimalString(bad), false, String(bad));
});

test('multiplyDecimal: exact line totals keep the unit price digits', async () => {
  const { multiplyDecimal } = await import('../../src/lib/money.ts');
  assert.equal(multiplyDecimal('4.50', 2), '9.00');
  assert.equal(multiplyDecimal('0.1', 3), '0.3'); // 0.1 * 3 = 0.30000000000000004 in floats
  assert.equal(multiplyDecimal('0.333', 3), '0.999');
  assert.equal(multiplyDecimal('10', 7), '70');
  assert.equal(multiplyDecimal('19.99', 0), '0.00');
  assert.equal(multiplyDecimal('99999999999999999.99', 1000), '99999999999999999990.00');
  assert.throws(() => multiplyDecimal('1e3', 1), RangeError);
  assert.throws(() => multiplyDecimal('1.5', -1), RangeError);
  assert.throws(() => multiplyDecimal('1.5', 1.5), RangeError);
});
