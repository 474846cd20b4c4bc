// Money as strings and bigints, never `number`: a float price parser is how x402 shipped a bug
// (0.1 + 0.2 style rounding on amounts). Amounts on the wire are integer strings in the token's
// smallest unit (`amount_wei`) or decimal strings (`price`, `fiat_amount`); in code they are bigint.
// Every value here is bounded by uint256, the width of an ERC-20 amount and of SQL numeric(78,0).

/** 2^256 − 1, the largest token amount a contract can hold. */
export const MAX_UINT256 = (1n << 256n) - 1n;

/** ERC-20 `decimals()` is a uint8. */
const MAX_DECIMALS = 255;
// A bound on input length before BigInt() sees it: BigInt parsing is superlinear, and no uint256
// value with up to 255 decimals needs more than 78 + 1 + 255 characters (leading zeros aside).
const MAX_INPUT_LENGTH = 1024;

export type MoneyErrorCode = 'invalid_format' | 'too_many_fraction_digits' | 'out_of_range' | 'invalid_decimals';

/** A rejected money string; `code` says why, so validation can map it to a field error. */
export class MoneyError extends Error {
  override name = 'MoneyError';
  readonly code: MoneyErrorCode;
  constructor(code: MoneyErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

function quote(s: unknown): string {
  if (typeof s !== 'string') return typeof s;
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

function checkDecimals(decimals: number, name = 'decimals'): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new MoneyError('invalid_decimals', `${name} must be an integer from 0 to ${MAX_DECIMALS}, got ${String(decimals)}`);
  }
}

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;

/**
 * Parses a decimal string into the integer number of smallest units (`"9.99"`, 6 → `9990000n`).
 *
 * Grammar `^\d+(\.\d+)?$` (ASCII digits): no sign, no exponent, no `+`, no whitespace, no bare
 * `.5` or `5.`. More fraction digits than `decimals` is an error even when they are zeros: the
 * caller asked for a precision the token cannot represent, and silent rounding is how money leaks.
 *
 * @throws MoneyError `invalid_format`, `too_many_fraction_digits`, `out_of_range` (> 2^256 − 1),
 *   `invalid_decimals`.
 * @example
 * parseDecimal('9.99', 6)  // => 9990000n
 * parseDecimal('1', 0)     // => 1n
 * parseDecimal('0.001', 2) // throws MoneyError (too_many_fraction_digits)
 */
export function parseDecimal(s: string, decimals: number): bigint {
  checkDecimals(decimals);
  const m = typeof s === 'string' ? DECIMAL.exec(s) : null;
  if (!m) throw new MoneyError('invalid_format', `not a decimal string (digits, optionally "." and digits): ${quote(s)}`);
  if (s.length > MAX_INPUT_LENGTH) throw new MoneyError('out_of_range', `decimal string longer than ${MAX_INPUT_LENGTH} characters`);
  const int = m[1]!;
  const frac = m[2] ?? '';
  if (frac.length > decimals) {
    throw new MoneyError('too_many_fraction_digits', `${quote(s)} has ${frac.length} fraction digits; at most ${decimals} allowed`);
  }
  const v = BigInt(int + frac.padEnd(decimals, '0'));
  if (v > MAX_UINT256) throw new MoneyError('out_of_range', `${quote(s)} exceeds 2^256 - 1 smallest units`);
  return v;
}

/** @example isDecimalString('9.99', 2) // => true;  isDecimalString('9.999', 2) // => false */
export function isDecimalString(s: unknown, decimals: number): boolean {
  checkDecimals(decimals);
  try {
    parseDecimal(s as string, decimals);
    return true;
  } catch (e) {
    if (e instanceof MoneyError) return false;
    throw e;
  }
}

/**
 * Formats smallest units as a decimal string: trailing fraction zeros are trimmed, then the
 * fraction is padded back to `minFractionDigits` (which may exceed `decimals`, e.g. "5.00" for a
 * 0-decimal amount). Negative values (ledger adjustments) get a leading "-".
 *
 * @example
 * formatUnits(9990000n, 6)    // => '9.99'
 * formatUnits(1000000n, 6)    // => '1'
 * formatUnits(1000000n, 6, 2) // => '1.00'
 * formatUnits(5n, 6)          // => '0.000005'
 */
export function formatUnits(v: bigint, decimals: number, minFractionDigits = 0): string {
  if (typeof v !== 'bigint') throw new TypeError('formatUnits: value must be a bigint');
  checkDecimals(decimals);
  checkDecimals(minFractionDigits, 'minFractionDigits');
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(decimals + 1, '0');
  const int = digits.slice(0, digits.length - decimals);
  let frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  if (frac.length < minFractionDigits) frac = frac.padEnd(minFractionDigits, '0');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

const UINT = /^(?:0|[1-9][0-9]*)$/;

/**
 * Parses a canonical unsigned integer string (`amount_wei`, a uint256 in a calldata message):
 * ASCII digits, no leading zeros except `"0"` itself, no sign, at most 2^256 − 1. Canonical form
 * matters because the string is compared and signed as is: "010" and "10" must not both be valid.
 *
 * @throws MoneyError `invalid_format` or `out_of_range`.
 * @example
 * parseUint256('1000000') // => 1000000n
 * parseUint256('01')      // throws MoneyError (invalid_format)
 */
export function parseUint256(s: string): bigint {
  if (typeof s !== 'string' || !UINT.test(s)) throw new MoneyError('invalid_format', `not a canonical unsigned integer: ${quote(s)}`);
  // 78 digits is the width of 2^256 − 1: anything longer is out of range without calling BigInt.
  if (s.length > 78) throw new MoneyError('out_of_range', `${quote(s)} exceeds 2^256 - 1`);
  const v = BigInt(s);
  if (v > MAX_UINT256) throw new MoneyError('out_of_range', `${quote(s)} exceeds 2^256 - 1`);
  return v;
}

/**
 * Whether `s` is a canonical positive integer string within uint256: the shape of a non-zero
 * `amount_wei`. `"0"`, `"01"`, `"1.0"`, `"-1"`, `"1e6"`, `" 1"` are all false.
 *
 * @example
 * isPositiveIntegerString('1000000') // => true
 * isPositiveIntegerString('0')       // => false
 */
export function isPositiveIntegerString(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > 78 || !/^[1-9][0-9]*$/.test(s)) return false;
  return BigInt(s) <= MAX_UINT256;
}
