// Prefixed random identifiers (the prefixes below; docs/orders.md shows them): `ord_3vQB7…`.
//
// Why base58 (bitcoin alphabet): no 0/O/I/l look-alikes when an ID is read aloud to support, and no
// `-`/`_` so a double-click selects the whole ID. The random part is the big-endian integer of the
// bytes written in base58 and left-padded with '1' (digit zero) to a fixed width, so every ID of a
// prefix has the same length: 16 bytes → 22 characters, 24 bytes → 33. Converting the whole integer
// (instead of mapping bytes to characters one by one) keeps the output free of modulo bias.
import { randomBytes } from 'node:crypto';

export const ID_PREFIXES = ['ord', 'cs', 'evt', 'whd', 'ch', 'qps', 'mch', 'whe', 'req', 'key', 'prd', 'pl', 'rf'] as const;
/**
 * `ord` order, `cs` checkout session, `evt` event, `whd` webhook delivery, `ch` machine-payment
 * challenge, `qps` quick-pay session, `mch` merchant, `whe` webhook endpoint, `req` request, `key` API key,
 * `prd` quick-pay product, `pl` payment link, `rf` card refund.
 */
export type IdPrefix = (typeof ID_PREFIXES)[number];

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE = 58n;

/** Default random bytes per prefix. A checkout ID is a bearer capability: at least 128 bits; 192 leaves margin. */
export const ID_DEFAULT_BYTES: Readonly<Record<IdPrefix, number>> = Object.freeze({
  ord: 16,
  cs: 24,
  evt: 16,
  whd: 16,
  ch: 16,
  qps: 16,
  mch: 16,
  whe: 16,
  req: 16,
  key: 16,
  prd: 16,
  pl: 16,
  rf: 16,
});

/**
 * CSPRNG bytes drawn from a 4 KiB buffer refilled by `randomBytes`: the same generator's output,
 * fetched in bulk. One `randomBytes` call costs ~7 µs on the project's VMs (a getrandom round
 * trip), two per created order; node's `randomUUID` caches entropy for the same reason. Each
 * returned slice is used once; the buffer is never handed out twice.
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;
export function pooledRandomBytes(n: number): Buffer {
  if (n > POOL_SIZE) return randomBytes(n);
  if (poolOffset + n > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + n));
  poolOffset += n;
  return out;
}

const MIN_BYTES = 8;
const MAX_BYTES = 64;
/** Capabilities (checkout IDs) must never fall below 128 bits, whatever the caller asks. */
const CAPABILITY_MIN_BYTES = 16;

const widthCache = new Map<number, number>();
/** Smallest width w with 58^w ≥ 256^bytes, i.e. enough base58 digits for any value of that many bytes. */
function encodedWidth(bytes: number): number {
  let w = widthCache.get(bytes);
  if (w === undefined) {
    const limit = 1n << BigInt(8 * bytes);
    w = 0;
    for (let p = 1n; p < limit; p *= BASE) w++;
    widthCache.set(bytes, w);
  }
  return w;
}

function checkBytes(prefix: IdPrefix, bytes: number): void {
  if (!Number.isInteger(bytes) || bytes < MIN_BYTES || bytes > MAX_BYTES) {
    throw new RangeError(`newId: bytes must be an integer from ${MIN_BYTES} to ${MAX_BYTES}, got ${bytes}`);
  }
  if (prefix === 'cs' && bytes < CAPABILITY_MIN_BYTES) {
    throw new RangeError(`newId: a checkout ID is a bearer capability and needs at least ${CAPABILITY_MIN_BYTES} bytes`);
  }
}

/**
 * Fixed-width base58 of a byte string (exported for tests and deterministic fixtures).
 *
 * Schoolbook long division in small integers, not BigInt: the digits (least significant last) are
 * multiplied by 256 and the next byte added, one byte at a time; every intermediate value stays
 * below 58 × 256 + 255, far inside exact double range. Same digits as `n % 58n` on the whole
 * integer, at a small fraction of the cost (two ids per created order: the order's and the request's).
 */
export function encodeBase58Fixed(buf: Uint8Array): string {
  const width = encodedWidth(buf.length);
  const digits = new Uint8Array(width);
  // Digits above `top` are still zero: the loop only walks the ones that can be non-zero.
  let top = width;
  for (let i = 0; i < buf.length; i++) {
    let carry = buf[i]!;
    let j = width - 1;
    for (; j >= top || carry !== 0; j--) {
      carry += digits[j]! * 256;
      digits[j] = carry % 58;
      carry = (carry - digits[j]!) / 58;
    }
    top = j + 1;
  }
  let out = '';
  for (let j = 0; j < width; j++) out += ALPHABET[digits[j]!];
  return out;
}

/**
 * A fresh random ID: `prefix_` + fixed-width base58 of `bytes` crypto-random bytes
 * (default 16, and 24 for `cs`).
 *
 * @throws RangeError when `bytes` is outside 8–64, or below 16 for a `cs` ID.
 * @example
 * newId('ord') // => 'ord_7dQmXH3s9PvK2wJ8cLrT4y' (22 characters after the prefix)
 * newId('cs')  // => 'cs_…' (33 characters after the prefix)
 */
export function newId(prefix: IdPrefix, bytes: number = ID_DEFAULT_BYTES[prefix]): string {
  if (!(ID_PREFIXES as readonly string[]).includes(prefix)) throw new RangeError(`newId: unknown prefix ${String(prefix)}`);
  checkBytes(prefix, bytes);
  return `${prefix}_${encodeBase58Fixed(pooledRandomBytes(bytes))}`;
}

/**
 * Whether `s` has the shape of an ID minted by {@link newId} for `prefix` (with `bytes`, default the
 * prefix's default): exact prefix, exact width, base58 alphabet, and no value beyond 256^bytes − 1.
 * Use it to reject garbage early (404 without a database read); it says nothing about existence.
 * Operator-chosen merchant IDs (`POST /admin/v1/merchants { merchant_id }`) need not match it.
 *
 * @example
 * isId('ord', newId('ord')) // => true
 * isId('ord', newId('evt')) // => false
 */
export function isId(prefix: IdPrefix, s: unknown, bytes: number = ID_DEFAULT_BYTES[prefix]): boolean {
  if (typeof s !== 'string' || !(ID_PREFIXES as readonly string[]).includes(prefix)) return false;
  if (!Number.isInteger(bytes) || bytes < MIN_BYTES || bytes > MAX_BYTES) return false;
  const head = `${prefix}_`;
  if (!s.startsWith(head)) return false;
  const body = s.slice(head.length);
  if (body.length !== encodedWidth(bytes)) return false;
  let n = 0n;
  for (const c of body) {
    const d = ALPHABET.indexOf(c);
    if (d < 0) return false;
    n = n * BASE + BigInt(d);
  }
  // The width has room for slightly more than 256^bytes values; those can never be minted.
  return n < 1n << BigInt(8 * bytes);
}
