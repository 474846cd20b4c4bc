import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBase58Fixed, ID_DEFAULT_BYTES, ID_PREFIXES, isId, newId } from '../../src/index.ts';
import { prng } from './prng.ts';

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

// Textbook bitcoin base58 (leading zero bytes become '1's), written independently as a reference.
function bitcoinBase58(bytes: Uint8Array): string {
  const digits: number[] = [];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i]! << 8;
      digits[i] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return (
    '1'.repeat(zeros) +
    digits
      .reverse()
      .map((d) => B58[d])
      .join('')
  );
}

test('encodeBase58Fixed: known bitcoin base58 values, left-padded with "1"', () => {
  assert.equal(encodeBase58Fixed(Buffer.from('Hello World!')).replace(/^1+/, ''), '2NEpo7TZRRrLZSi2U');
  assert.equal(bitcoinBase58(Buffer.from('Hello World!')), '2NEpo7TZRRrLZSi2U');
  assert.equal(encodeBase58Fixed(new Uint8Array(16)), '1'.repeat(22));
  assert.equal(encodeBase58Fixed(new Uint8Array(16).fill(0xff)), 'YcVfxkQb6JRzqk5kF2tNLv');
  assert.equal(encodeBase58Fixed(new Uint8Array(24)).length, 33);
  assert.equal(encodeBase58Fixed(new Uint8Array(24).fill(0xff)).length, 33);
});

test('property: encodeBase58Fixed equals textbook base58 up to padding (seeded)', () => {
  const r = prng(58);
  for (let i = 0; i < 2000; i++) {
    const n = 8 + r.int(57);
    const bytes = new Uint8Array(n);
    for (let j = 0; j < n; j++) bytes[j] = r.int(256);
    if (r.next() < 0.1) bytes[0] = 0; // exercise leading zeros
    const fixed = encodeBase58Fixed(bytes);
    const ref = bitcoinBase58(bytes);
    assert.equal(fixed.replace(/^1+/, ''), ref.replace(/^1+/, ''), Buffer.from(bytes).toString('hex'));
    assert.equal(fixed.length, encodeBase58Fixed(new Uint8Array(n).fill(0xff)).length, 'fixed width');
  }
});

test('newId: prefix, fixed length, alphabet, defaults (cs is 24 bytes)', () => {
  for (const p of ID_PREFIXES) {
    const id = newId(p);
    const width = ID_DEFAULT_BYTES[p] === 24 ? 33 : 22;
    assert.match(id, new RegExp(`^${p}_[${B58}]{${width}}$`), id);
    assert.equal(isId(p, id), true, id);
  }
  assert.equal(ID_DEFAULT_BYTES.cs, 24);
  assert.equal(newId('cs').length, 'cs_'.length + 33);
  assert.equal(newId('ord').length, 'ord_'.length + 22);
  assert.equal(newId('req', 32).length, 'req_'.length + 44);
});

test('newId: 10 000 IDs are unique and use the whole alphabet', () => {
  const seen = new Set<string>();
  const chars = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const id = newId('evt');
    seen.add(id);
    for (const c of id.slice(4)) chars.add(c);
  }
  assert.equal(seen.size, 10_000);
  assert.equal(chars.size, 58);
});

test('newId: byte counts are bounded; a checkout ID never drops below 128 bits', () => {
  for (const bytes of [0, 7, 65, 1.5, NaN, -16]) assert.throws(() => newId('ord', bytes), RangeError, String(bytes));
  assert.throws(() => newId('cs', 15), /bearer capability/);
  assert.equal(isId('cs', newId('cs', 16), 16), true);
  assert.throws(() => newId('nope' as 'ord'), RangeError);
});

test('isId: rejects other prefixes, wrong widths, foreign characters, values beyond the byte range', () => {
  const ord = newId('ord');
  const body = ord.slice(4);
  for (const bad of [
    newId('evt'),
    `ORD_${body}`,
    `ord-${body}`,
    `ord_${body.slice(1)}`,
    `ord_${body}1`,
    `ord_0${body.slice(1)}`, // 0, O, I, l are not base58
    `ord_O${body.slice(1)}`,
    `ord_I${body.slice(1)}`,
    `ord_l${body.slice(1)}`,
    `ord_${body.slice(1)}_`,
    `ord_${'z'.repeat(22)}`, // 58^22 - 1 > 2^128 - 1: never minted
    'ord_',
    '',
    ` ${ord}`,
    undefined,
    42,
  ]) {
    assert.equal(isId('ord', bad), false, String(bad));
  }
  assert.equal(isId('ord', `ord_${'1'.repeat(22)}`), true, 'zero value is well-formed');
  assert.equal(isId('ord', 'ord_YcVfxkQb6JRzqk5kF2tNLv'), true, 'the maximum 16-byte value');
  assert.equal(isId('ord', 'ord_YcVfxkQb6JRzqk5kF2tNLw'), false, 'one past the maximum');
  assert.equal(isId('cs', newId('ch')), false);
  assert.equal(isId('ch', newId('cs')), false);
  assert.equal(isId('ord', ord, 24), false, 'width follows the byte count');
  assert.equal(isId('ord', ord, 1e9), false, 'absurd byte counts are not an attack surface');
  assert.equal(isId('nope' as 'ord', ord), false);
});
