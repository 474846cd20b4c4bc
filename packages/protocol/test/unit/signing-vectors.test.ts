// The published vectors must hold for any correct implementation, not just ours. So each vector is
// checked three ways: against src/signing.ts, against an independent minimal implementation written
// here from the spec text (plain loops, WebCrypto HMAC instead of node:crypto's createHmac), and for
// a few vectors against canonical strings typed by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildSignParams, canonicalString, signRequest, verifyRequestSignature, type SignInput } from '../../src/index.ts';
import { renderVectors, VECTORS_PATH, type SigningVector } from '../../scripts/gen-vectors.ts';

const file = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as { version: number; vectors: SigningVector[] };
const vectors = file.vectors;
const byName = new Map(vectors.map((v) => [v.name, v]));

function inputOf(v: SigningVector): SignInput {
  return { query: v.query, body: v.body, apiKey: v.api_key, timestamp: v.timestamp, nonce: v.nonce };
}

// --- Independent implementation, straight from docs/authentication.md -----------------------
// Deliberately naive and structured differently from src/signing.ts (plain object, insertion sort,
// WebCrypto), so a shared bug would have to be made twice. JSON scalars only: all the vectors use.
function referenceCanonical(v: SigningVector): string {
  const fields: { [k: string]: string } = {};
  for (const k of Object.keys(v.query)) fields[k] = v.query[k]!; // step 1: query
  for (const k of Object.keys(v.body)) {
    const x = v.body[k];
    if (x === null) continue; // absent optional field
    if (x === true) fields[k] = 'true';
    else if (x === false) fields[k] = 'false';
    else if (typeof x === 'number')
      fields[k] = x.toString(10); // step 2: scalars to strings
    else fields[k] = x as string; // body overrides query
  }
  fields.api_key = v.api_key; // step 3
  fields.timestamp = v.timestamp;
  fields.nonce = v.nonce;
  const names: string[] = [];
  for (const k of Object.keys(fields)) if (k !== 'sign' && fields[k] !== '') names.push(k); // step 4
  // Step 5: ASCII order by an explicit insertion sort on char codes (no Array#sort, no locale).
  for (let i = 1; i < names.length; i++) {
    for (let j = i; j > 0 && asciiLess(names[j]!, names[j - 1]!); j--) [names[j - 1], names[j]] = [names[j]!, names[j - 1]!];
  }
  let out = '';
  for (const k of names) out += `${out ? '&' : ''}${k}=${fields[k]}`;
  return out;
}

function asciiLess(a: string, b: string): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.charCodeAt(i) < b.charCodeAt(i);
  }
  return a.length < b.length;
}

async function referenceSign(secret: string, canonical: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(canonical)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}
// ---------------------------------------------------------------------------------------------------

test('the vector file is what scripts/gen-vectors.ts renders (not edited by hand, not stale)', () => {
  assert.equal(readFileSync(VECTORS_PATH, 'utf8'), renderVectors());
  assert.equal(file.version, 1);
});

test('at least 12 vectors, unique names, every field present and typed', () => {
  assert.ok(vectors.length >= 12, `only ${vectors.length} vectors`);
  assert.equal(byName.size, vectors.length, 'duplicate vector names');
  for (const v of vectors) {
    for (const k of ['name', 'description', 'api_secret', 'api_key', 'timestamp', 'nonce', 'canonical', 'sign'] as const) {
      assert.equal(typeof v[k], 'string', `${v.name}.${k}`);
    }
    assert.equal(typeof v.query, 'object');
    assert.equal(typeof v.body, 'object');
    assert.match(v.sign, /^[0-9a-f]{64}$/);
    assert.match(v.timestamp, /^[0-9]{10}$/, 'seconds, not milliseconds');
  }
});

test('the vectors cover every case the spec calls out', () => {
  for (const name of [
    'order_create_plain',
    'body_overrides_query',
    'headers_override_business_fields',
    'empty_string_dropped',
    'zero_and_false_kept',
    'sign_field_dropped',
    'numbers_and_booleans',
    'unicode_value',
    'ampersand_and_equals_unescaped',
    'ascii_sort_order',
    'checkout_session_line_items_json',
  ]) {
    assert.ok(byName.has(name), `missing vector ${name}`);
  }
});

for (const v of vectors) {
  test(`vector ${v.name}: src/signing.ts and the independent implementation both reproduce it`, async () => {
    assert.equal(canonicalString(buildSignParams(inputOf(v))), v.canonical);
    assert.equal(signRequest(v.api_secret, inputOf(v)), v.sign);
    assert.equal(verifyRequestSignature(v.api_secret, inputOf(v), v.sign), true);

    assert.equal(referenceCanonical(v), v.canonical);
    assert.equal(await referenceSign(v.api_secret, v.canonical), v.sign);

    // A server sees the body after JSON.parse: the vector must hold for the transmitted form too.
    const wireBody = JSON.parse(JSON.stringify(v.body)) as Record<string, unknown>;
    assert.equal(signRequest(v.api_secret, { ...inputOf(v), body: wireBody }), v.sign);
  });
}

const KEY = 'key_4NbVzQ7hTd2sWx9KcRfYpM';

test('hand-written canonical strings', () => {
  const expected: Record<string, string> = {
    order_create_plain: `amount_wei=1000000&api_key=${KEY}&chain_id=2345&dapp_order_id=shop-1001` + '&from_address=0x8ba1f109551bd432803012645ac136ddd64dba72&nonce=0f8fad5b-d9cb-469f-a165-70867728950e' + '&timestamp=1735689600&token_symbol=USDC',
    get_without_params: `api_key=${KEY}&nonce=7c9e6679-7425-40de-944b-e07fc1f90ae7&timestamp=1735689601`,
    headers_override_business_fields: `api_key=${KEY}&dapp_order_id=shop-1003&nonce=b3c1d9e2-5f6a-4b7c-8d9e-0f1a2b3c4d5e&timestamp=1735689603`,
    zero_and_false_kept: `amount_wei=0&api_key=${KEY}&expires_in=0&nonce=e6f4a2b5-8c9d-4e0f-9a2b-3c4d5e6f7081&page=0&test_mode=false&timestamp=1735689606`,
    ascii_sort_order: `A=6&B=2&Z=8&_z=9&a=7&aB=5&a_b=3&ab=4&api_key=${KEY}&b=1&nonce=e2f0a8b1-4c5d-4e6f-9081-92a3b4c5d6e7&timestamp=1735689612`,
    ampersand_and_equals_unescaped: `api_key=${KEY}&nonce=d1e9f7a0-3b4c-4d5e-8f70-8192a3b4c5d6&note=a=b&c=d` + '&success_url=https://shop.example/ok?order=1&x=y&timestamp=1735689611',
    unicode_value: `api_key=${KEY}&dapp_order_id=café-東京-🚀&description=Grüße&nonce=b9c7d5e8-1f2a-4b3c-8d5e-6f708192a3b4&timestamp=1735689609`,
    checkout_session_line_items_json:
      `api_key=${KEY}&checkout_type=DIRECT&client_reference_id=cart_8812&expires_in=1800&fiat_amount=9.99&fiat_currency=USD` +
      '&line_items_json=[{"name":"T-shirt","quantity":1,"amount":"9.99"}]&nonce=f3a1b9c2-5d6e-4f70-8192-a3b4c5d6e7f8' +
      '&payment_rails=crypto,fiat&price=9.99&public_metadata_json={"campaign": "spring", "ref": "a&b=c"}' +
      '&success_url=https://shop.example/thanks&timestamp=1735689613',
  };
  for (const [name, canonical] of Object.entries(expected)) {
    assert.equal(byName.get(name)?.canonical, canonical, name);
  }
});

test('localeCompare would have produced a different order (the ascii vector really tests something)', () => {
  const v = byName.get('ascii_sort_order')!;
  const names = v.canonical.split('&').map((kv) => kv.slice(0, kv.indexOf('=')));
  assert.notDeepEqual(
    [...names].sort((a, b) => a.localeCompare(b)),
    names,
  );
});

test('the unicode vector signs UTF-8 bytes: a Latin-1 or UTF-16 encoding gives a different HMAC', async () => {
  const v = byName.get('unicode_value')!;
  const { createHmac } = await import('node:crypto');
  assert.notEqual(createHmac('sha256', v.api_secret).update(Buffer.from(v.canonical, 'latin1')).digest('hex'), v.sign);
  assert.notEqual(createHmac('sha256', v.api_secret).update(Buffer.from(v.canonical, 'utf16le')).digest('hex'), v.sign);
});

test('the vectors for one request under two secrets differ, and a signature never verifies under the other secret', () => {
  const a = byName.get('order_create_plain')!;
  const b = byName.get('other_secret_and_key')!;
  assert.notEqual(a.sign, b.sign);
  assert.equal(verifyRequestSignature(b.api_secret, inputOf(a), a.sign), false);
  assert.equal(verifyRequestSignature(a.api_secret, inputOf(b), b.sign), false);
});

test('the worked example in README.md is the order_create_plain vector, verbatim', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const v = byName.get('order_create_plain')!;
  for (const s of [v.canonical, v.sign, v.api_secret, v.api_key, v.timestamp, v.nonce]) assert.ok(readme.includes(s), s);
  assert.ok(readme.includes(`${vectors.length} vectors`), 'README states the vector count');
});
