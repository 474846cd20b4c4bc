import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatUnits, isDecimalString, isPositiveIntegerString, MAX_UINT256, MoneyError, parseDecimal, parseUint256, type MoneyErrorCode } from '../../src/index.ts';
import { prng } from './prng.ts';

const MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

function throwsMoney(fn: () => unknown, code: MoneyErrorCode, label: string): void {
  assert.throws(fn, (e: unknown) => e instanceof MoneyError && e.code === code && e.name === 'MoneyError', label);
}

test('parseDecimal: valid inputs', () => {
  const cases: [string, number, bigint][] = [
    ['0', 0, 0n],
    ['0', 6, 0n],
    ['0.0', 1, 0n],
    ['1', 0, 1n],
    ['1', 6, 1000000n],
    ['9.99', 2, 999n],
    ['9.99', 6, 9990000n],
    ['9.990000', 6, 9990000n],
    ['0.000001', 6, 1n],
    ['007.50', 2, 750n],
    ['123456789.123456789012345678', 18, 123456789123456789012345678n],
    [MAX, 0, MAX_UINT256],
    ['1', 77, 10n ** 77n],
    ['0.' + '0'.repeat(254) + '1', 255, 1n],
  ];
  for (const [s, d, want] of cases) assert.equal(parseDecimal(s, d), want, `${s} @${d}`);
});

test('parseDecimal: grammar violations are invalid_format', () => {
  for (const s of ['', ' ', '\t', '\n1', '1 ', ' 1', '1\n', '.', '.5', '5.', '1..2', '1.2.3', '-1', '+1', '-0', '1e6', '1E6', '1e-6', '0x10', '1,000', '1_000', '١', '１', '1.٠', 'NaN', 'Infinity', '∞', '½', '1/2', '¹', '١٢٣', '1\u00a0', '\u200b1']) {
    throwsMoney(() => parseDecimal(s, 6), 'invalid_format', JSON.stringify(s));
  }
  for (const v of [undefined, null, 1, 1n, {}, ['1']]) throwsMoney(() => parseDecimal(v as string, 6), 'invalid_format', String(v));
});

test('parseDecimal: more fraction digits than decimals is refused, even trailing zeros', () => {
  throwsMoney(() => parseDecimal('0.001', 2), 'too_many_fraction_digits', '0.001@2');
  throwsMoney(() => parseDecimal('9.990', 2), 'too_many_fraction_digits', '9.990@2');
  throwsMoney(() => parseDecimal('1.0', 0), 'too_many_fraction_digits', '1.0@0');
  throwsMoney(() => parseDecimal('1.0000001', 6), 'too_many_fraction_digits', '1.0000001@6');
});

test('parseDecimal: range and decimals bounds', () => {
  throwsMoney(() => parseDecimal((MAX_UINT256 + 1n).toString(), 0), 'out_of_range', 'MAX+1');
  throwsMoney(() => parseDecimal('1', 78), 'out_of_range', '10^78');
  throwsMoney(() => parseDecimal('1'.repeat(2000), 0), 'out_of_range', 'long');
  assert.equal(parseDecimal('0'.repeat(900) + '1', 0), 1n, 'leading zeros under the length bound are fine');
  for (const d of [-1, 256, 1.5, NaN, Infinity]) throwsMoney(() => parseDecimal('1', d), 'invalid_decimals', String(d));
});

test('parseDecimal error messages quote the input, truncated', () => {
  assert.throws(() => parseDecimal('abc', 2), /"abc"/);
  assert.throws(
    () => parseDecimal('x'.repeat(100), 2),
    (e: unknown) => e instanceof MoneyError && e.message.length < 150,
  );
});

test('isDecimalString', () => {
  assert.equal(isDecimalString('9.99', 2), true);
  assert.equal(isDecimalString('9.999', 2), false);
  assert.equal(isDecimalString('-1', 2), false);
  assert.equal(isDecimalString(9.99, 2), false, 'a number is not a decimal string');
  assert.throws(() => isDecimalString('1', -1), MoneyError, 'bad decimals is a caller bug, not a false');
});

test('formatUnits: table', () => {
  const cases: [bigint, number, number | undefined, string][] = [
    [0n, 0, undefined, '0'],
    [0n, 6, undefined, '0'],
    [0n, 6, 2, '0.00'],
    [1n, 0, undefined, '1'],
    [1n, 6, undefined, '0.000001'],
    [9990000n, 6, undefined, '9.99'],
    [1000000n, 6, undefined, '1'],
    [1000000n, 6, 2, '1.00'],
    [1234567n, 6, 2, '1.234567'],
    [1230000n, 6, 2, '1.23'],
    [1200000n, 6, 2, '1.20'],
    [5n, 0, 2, '5.00'],
    [100n, 2, undefined, '1'],
    [-1500000n, 6, undefined, '-1.5'],
    [-1n, 6, undefined, '-0.000001'],
    [MAX_UINT256, 0, undefined, MAX],
    [MAX_UINT256, 18, undefined, '115792089237316195423570985008687907853269984665640564039457.584007913129639935'],
    [10n ** 77n, 77, undefined, '1'],
  ];
  for (const [v, d, min, want] of cases) assert.equal(formatUnits(v, d, min), want, `${v} @${d} min ${min}`);
});

test('formatUnits: argument checks', () => {
  assert.throws(() => formatUnits(1 as unknown as bigint, 6), TypeError, 'never a number');
  for (const d of [-1, 256, 0.5]) assert.throws(() => formatUnits(1n, d), MoneyError);
  assert.throws(() => formatUnits(1n, 6, -1), MoneyError);
});

// An independent reference: scale by multiplying, not by string padding.
function referenceParse(s: string, decimals: number): bigint {
  const dot = s.indexOf('.');
  if (dot < 0) return BigInt(s) * 10n ** BigInt(decimals);
  const frac = s.slice(dot + 1);
  return BigInt(s.slice(0, dot)) * 10n ** BigInt(decimals) + BigInt(frac) * 10n ** BigInt(decimals - frac.length);
}

test('property: parseDecimal(formatUnits(v)) === v and matches the reference (seeded)', () => {
  const r = prng(2718);
  for (let i = 0; i < 5000; i++) {
    const decimals = r.pick([0, 1, 2, 6, 8, 18, 30, 77, r.int(256)]);
    const v = r.bigint(1 + r.int(256));
    const min = r.int(decimals + 3);
    const s = formatUnits(v, decimals, min);
    assert.match(s, /^[0-9]+(\.[0-9]+)?$/, s);
    if (min > decimals) {
      assert.equal(parseDecimal(s.replace(/\.?0+$/, '') || '0', decimals), v);
      continue;
    }
    assert.equal(parseDecimal(s, decimals), v, `${v} @${decimals} -> ${s}`);
    assert.equal(referenceParse(s, decimals), v);
    // Canonical: no leading zeros, no trailing zeros beyond minFractionDigits.
    assert.doesNotMatch(s, /^0[0-9]/);
    const frac = s.split('.')[1] ?? '';
    if (frac.length > min) assert.doesNotMatch(frac, /0$/);
  }
});

test('property: random strings either parse exactly like the reference or throw MoneyError (seeded)', () => {
  const r = prng(161803);
  let parsed = 0;
  for (let i = 0; i < 20_000; i++) {
    const s = r.string('0123456789..-+eE x١', r.int(12));
    const decimals = r.int(10);
    let got: bigint | MoneyError;
    try {
      got = parseDecimal(s, decimals);
    } catch (e) {
      assert.ok(e instanceof MoneyError, `non-MoneyError for ${JSON.stringify(s)}: ${String(e)}`);
      got = e;
    }
    const valid = /^[0-9]+(\.[0-9]+)?$/.test(s) && (s.split('.')[1] ?? '').length <= decimals;
    if (valid) {
      parsed++;
      assert.equal(got, referenceParse(s, decimals), JSON.stringify(s));
    } else {
      assert.ok(got instanceof MoneyError, JSON.stringify(s));
    }
  }
  assert.ok(parsed > 1000, `the generator produced only ${parsed} valid inputs`);
});

test('parseUint256: canonical unsigned integers up to 2^256 - 1', () => {
  assert.equal(parseUint256('0'), 0n);
  assert.equal(parseUint256('1'), 1n);
  assert.equal(parseUint256('1000000'), 1000000n);
  assert.equal(parseUint256(MAX), MAX_UINT256);
  throwsMoney(() => parseUint256((MAX_UINT256 + 1n).toString()), 'out_of_range', 'MAX+1');
  throwsMoney(() => parseUint256('9'.repeat(79)), 'out_of_range', '79 digits');
  throwsMoney(() => parseUint256('1'.repeat(100_000)), 'out_of_range', 'huge');
  for (const s of ['', '00', '01', '-0', '-1', '+1', '1.0', '1e6', ' 1', '1 ', '0x1', '１', '1_000', 'abc']) {
    throwsMoney(() => parseUint256(s), 'invalid_format', JSON.stringify(s));
  }
  for (const v of [1, 1n, null, undefined]) throwsMoney(() => parseUint256(v as unknown as string), 'invalid_format', String(v));
});

test('property: parseUint256 round-trips every bit width (seeded)', () => {
  const r = prng(256);
  for (let bits = 1; bits <= 256; bits++) {
    for (let k = 0; k < 8; k++) {
      const v = r.bigint(bits);
      assert.equal(parseUint256(v.toString()), v);
    }
    const top = (1n << BigInt(bits)) - 1n;
    assert.equal(parseUint256(top.toString()), top);
  }
});

test('isPositiveIntegerString', () => {
  for (const s of ['1', '9', '10', '1000000', MAX]) assert.equal(isPositiveIntegerString(s), true, s);
  for (const s of ['0', '00', '01', '-1', '+1', '1.0', '1e6', ' 1', '1 ', '', (MAX_UINT256 + 1n).toString(), '9'.repeat(79), '١']) {
    assert.equal(isPositiveIntegerString(s), false, JSON.stringify(s));
  }
  for (const v of [1, 1n, null, undefined, ['1']]) assert.equal(isPositiveIntegerString(v), false, String(v));
});
