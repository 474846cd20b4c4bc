// Exact token amounts for display: integer base-unit strings → decimal strings, with BigInt only.
// A float never touches an amount (1.1 USDC is 1100000 base units, not 1.1000000000000000888).

const UINT = /^\d+$/;

/**
 * Formats an integer amount of base units (`amount_wei`) as an exact decimal string.
 * Trailing fractional zeros are trimmed down to `minFraction` digits (money reads as `10.00`).
 *
 * @example formatUnits('9990000', 6) // => '9.99'
 * @example formatUnits('10000000', 6) // => '10.00'
 * @example formatUnits('1', 6) // => '0.000001'
 * @example formatUnits('5', 0) // => '5'
 */
export function formatUnits(amount: string | bigint, decimals: number, minFraction = 2): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) throw new RangeError(`invalid decimals ${decimals}`);
  const s = typeof amount === 'bigint' ? amount.toString() : amount;
  if (!UINT.test(s)) throw new RangeError(`not a non-negative integer amount: ${s}`);
  const digits = BigInt(s)
    .toString()
    .padStart(decimals + 1, '0');
  const int = digits.slice(0, digits.length - decimals);
  let frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const min = Math.min(minFraction, decimals);
  if (frac.length < min) frac = frac.padEnd(min, '0');
  return frac ? `${int}.${frac}` : int;
}

/** True for a non-negative decimal string such as `9.99` or `10` (how prices travel on the wire). */
export function isDecimalString(s: unknown): s is string {
  return typeof s === 'string' && /^\d+(\.\d+)?$/.test(s);
}

/**
 * `unit × quantity` for line items (`amount` is the price of one unit), exactly: the result keeps
 * the unit price's fractional digits.
 *
 * @example multiplyDecimal('4.50', 2) // => '9.00'
 * @example multiplyDecimal('0.333', 3) // => '0.999'
 */
export function multiplyDecimal(unit: string, quantity: number): string {
  if (!isDecimalString(unit)) throw new RangeError(`not a decimal string: ${unit}`);
  if (!Number.isSafeInteger(quantity) || quantity < 0) throw new RangeError(`invalid quantity ${quantity}`);
  const [int, frac = ''] = unit.split('.');
  const product = BigInt(int! + frac) * BigInt(quantity);
  return formatUnits(product, frac.length, frac.length);
}
