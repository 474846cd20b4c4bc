import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { buildSignParams, canonicalString, HEADER_API_KEY, HEADER_NONCE, HEADER_SIGN, HEADER_TIMESTAMP, isNonceWellFormed, isTimestampFresh, signedHeaders, signRequest, verifyRequestSignature, type SignInput } from '../../src/index.ts';
import { prng } from './prng.ts';

const H = { apiKey: 'key_A', timestamp: '1700000000', nonce: 'nonce-0001' };
const SECRET = 'sec_unit_test';
const base = (extra: Partial<SignInput> = {}): SignInput => ({ ...H, ...extra });

test('buildSignParams: query, then body overrides, then headers overwrite', () => {
  const p = buildSignParams(
    base({
      query: { a: 'q', only_q: '1', api_key: 'q-key' },
      body: { a: 'b', only_b: '2', timestamp: '1', nonce: 'body' },
    }),
  );
  assert.deepEqual(p, { a: 'b', only_q: '1', only_b: '2', api_key: 'key_A', timestamp: '1700000000', nonce: 'nonce-0001' });
});

test('buildSignParams: scalar conversion', () => {
  const p = buildSignParams(
    base({
      body: { s: 'x', i: 2345, z: 0, negz: -0, f: 9.5, big: 1e21, t: true, fa: false, bi: 12345678901234567890n },
    }),
  );
  assert.equal(p.s, 'x');
  assert.equal(p.i, '2345');
  assert.equal(p.z, '0');
  assert.equal(p.negz, '0', 'JSON.stringify(-0) is "0"; the server sees 0');
  assert.equal(p.f, '9.5');
  assert.equal(p.big, '1e+21', 'same text JSON.stringify writes');
  assert.equal(p.t, 'true');
  assert.equal(p.fa, 'false');
  assert.equal(p.bi, '12345678901234567890');
});

test('buildSignParams: null and undefined are omitted and do not erase a same-named query value', () => {
  const p = buildSignParams(base({ query: { a: 'from-query' }, body: { a: null, b: undefined, c: null } }));
  assert.deepEqual(p, { a: 'from-query', ...{ api_key: 'key_A', timestamp: '1700000000', nonce: 'nonce-0001' } });
});

test('buildSignParams: an empty body string overrides the query value and then both are gone', () => {
  const p = buildSignParams(base({ query: { a: 'from-query' }, body: { a: '' } }));
  assert.equal('a' in p, false);
});

test('buildSignParams: "0", "false", " " and "null" are kept; only "" is dropped', () => {
  const p = buildSignParams(base({ body: { a: '0', b: 'false', c: ' ', d: 'null', e: '' } }));
  assert.equal(p.a, '0');
  assert.equal(p.b, 'false');
  assert.equal(p.c, ' ');
  assert.equal(p.d, 'null');
  assert.equal('e' in p, false);
});

test('buildSignParams: sign is removed wherever it comes from; SIGN (other case) is a different name and stays', () => {
  const p = buildSignParams(base({ query: { sign: 'q' }, body: { sign: 'b', SIGN: 'kept' } }));
  assert.equal('sign' in p, false);
  assert.equal(p.SIGN, 'kept');
});

test('buildSignParams: empty header values are dropped like any empty string (and then cannot verify)', () => {
  const p = buildSignParams({ apiKey: '', timestamp: '', nonce: '', body: { a: '1' } });
  assert.deepEqual(p, { a: '1' });
});

test('buildSignParams: nested objects and arrays are signed as JSON.stringify (servers reject them later)', () => {
  const p = buildSignParams(base({ body: { line_items: [{ name: 'T', quantity: 1 }], meta: { a: 'b' }, empty: [] } }));
  assert.equal(p.line_items, '[{"name":"T","quantity":1}]');
  assert.equal(p.meta, '{"a":"b"}');
  assert.equal(p.empty, '[]');
});

test('buildSignParams: a Date signs as its JSON string, which is what the server receives', () => {
  const d = new Date(Date.UTC(2025, 0, 1));
  const p = buildSignParams(base({ body: { at: d } }));
  assert.equal(p.at, '2025-01-01T00:00:00.000Z');
  const wire = JSON.parse(JSON.stringify({ at: d })) as Record<string, unknown>;
  assert.equal(signRequest(SECRET, base({ body: { at: d } })), signRequest(SECRET, base({ body: wire })));
});

test('buildSignParams: values JSON cannot carry throw instead of signing something the server never sees', () => {
  for (const bad of [NaN, Infinity, -Infinity, () => 1, Symbol('s')]) {
    assert.throws(() => buildSignParams(base({ body: { x: bad } })), TypeError, String(bad));
  }
});

test('buildSignParams: body must be an object; query values must be single strings', () => {
  assert.throws(() => buildSignParams(base({ body: [] as unknown as Record<string, unknown> })), TypeError);
  assert.throws(() => buildSignParams(base({ body: null as unknown as Record<string, unknown> })), TypeError);
  assert.throws(() => buildSignParams(base({ query: { a: ['1', '2'] } as unknown as Record<string, string> })), /single string/);
  assert.deepEqual(buildSignParams(base({ body: {} })), buildSignParams(base()));
});

test('buildSignParams: a "__proto__" field from JSON.parse is signed as data and pollutes nothing', () => {
  const body = JSON.parse('{"__proto__":"x","a":"1"}') as Record<string, unknown>;
  const p = buildSignParams(base({ body }));
  assert.equal(Object.getPrototypeOf(p), Object.prototype);
  assert.equal(Object.hasOwn(p, '__proto__'), true);
  assert.match(canonicalString(p), /^__proto__=x&a=1&api_key=/);
  assert.equal(({} as Record<string, unknown>).x, undefined);
});

test('buildSignParams does not mutate its input', () => {
  const input = base({ query: { sign: 's', a: '' }, body: { sign: 's', b: null } });
  const copy = structuredClone(input);
  buildSignParams(input);
  assert.deepEqual(input, copy);
});

test('canonicalString: ASCII code unit order, no escaping, empty set', () => {
  assert.equal(canonicalString({}), '');
  assert.equal(canonicalString({ b: '2', B: '1', a_b: '3', a: '0' }), 'B=1&a=0&a_b=3&b=2');
  assert.equal(canonicalString({ '1': 'x', '10': 'y', '9': 'z' }), '1=x&10=y&9=z', 'string order, not numeric');
  assert.equal(canonicalString({ k: 'a=b&c d%20+' }), 'k=a=b&c d%20+');
  assert.equal(canonicalString({ ab: '1', a: '2' }), 'a=2&ab=1', 'a prefix sorts first');
});

test('canonicalString: does not depend on insertion order (seeded)', () => {
  const r = prng(20240601);
  const names = ['a', 'A', '_', 'a_', 'aa', 'aA', 'Z', 'z', 'api_key', 'nonce', 'timestamp', '0', '~'];
  for (let i = 0; i < 200; i++) {
    const entries = names.filter(() => r.next() < 0.6).map((n) => [n, r.string('ab=&', 3)] as const);
    const shuffled = [...entries].sort(() => r.next() - 0.5);
    assert.equal(canonicalString(Object.fromEntries(entries)), canonicalString(Object.fromEntries(shuffled)));
  }
});

test('signRequest: 64 lowercase hex; empty secret refused', () => {
  assert.match(signRequest(SECRET, base()), /^[0-9a-f]{64}$/);
  assert.throws(() => signRequest('', base()), TypeError);
});

test('verifyRequestSignature: accepts only the exact lowercase digest', () => {
  const input = base({ body: { a: '1' } });
  const sig = signRequest(SECRET, input);
  assert.equal(verifyRequestSignature(SECRET, input, sig), true);
  for (const bad of [sig.toUpperCase(), `sha256=${sig}`, sig.slice(0, 63), `${sig}0`, ` ${sig}`, '', Buffer.from(sig, 'hex').toString('base64'), undefined as unknown as string, 0 as unknown as string]) {
    assert.equal(verifyRequestSignature(SECRET, input, bad), false, String(bad));
  }
  assert.equal(verifyRequestSignature('', input, sig), false, 'empty secret never verifies');
  assert.equal(verifyRequestSignature(`${SECRET}x`, input, sig), false);
});

test('verifyRequestSignature: any change to a signed element fails', () => {
  const input = base({ query: { q: '1' }, body: { a: '1', n: 5 } });
  const sig = signRequest(SECRET, input);
  const variants: SignInput[] = [
    { ...input, apiKey: 'key_B' },
    { ...input, timestamp: '1700000001' },
    { ...input, nonce: 'nonce-0002' },
    { ...input, query: { q: '2' } },
    { ...input, query: {} },
    { ...input, body: { a: '1', n: 6 } },
    { ...input, body: { a: '1', n: '5', extra: 'x' } },
    { ...input, body: { a: '1' } },
  ];
  for (const v of variants) assert.equal(verifyRequestSignature(SECRET, v, sig), false, JSON.stringify(v));
  // Moving a field between query and body does not change the signature: the path and the
  // placement are not signed, by design of the interface.
  assert.equal(verifyRequestSignature(SECRET, { ...input, query: {}, body: { q: '1', a: '1', n: 5 } }, sig), true);
});

test('signedHeaders: seconds from now(), nonce from nonce(), and a verifiable signature', () => {
  const body = { dapp_order_id: 'A-1', chain_id: 2345, amount_wei: '1000000' };
  const h = signedHeaders({ apiKey: 'key_A', apiSecret: SECRET, body, query: { x: '1' }, now: () => 1700000000999, nonce: () => 'fixed-nonce-1' });
  assert.deepEqual(Object.keys(h).sort(), [HEADER_API_KEY, HEADER_NONCE, HEADER_SIGN, HEADER_TIMESTAMP].sort());
  assert.equal(h['X-API-Key'], 'key_A');
  assert.equal(h['X-Timestamp'], '1700000000');
  assert.equal(h['X-Nonce'], 'fixed-nonce-1');
  const input = { apiKey: 'key_A', timestamp: '1700000000', nonce: 'fixed-nonce-1', body, query: { x: '1' } };
  assert.equal(h['X-Sign'], signRequest(SECRET, input));
  assert.equal(verifyRequestSignature(SECRET, { ...input, body: JSON.parse(JSON.stringify(body)) }, h['X-Sign']), true);
});

test('signedHeaders: defaults give a UUID nonce, fresh per call, and the current second', () => {
  const before = Math.floor(Date.now() / 1000);
  const a = signedHeaders({ apiKey: 'k', apiSecret: SECRET });
  const b = signedHeaders({ apiKey: 'k', apiSecret: SECRET });
  const after = Math.floor(Date.now() / 1000);
  assert.match(a['X-Nonce'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(a['X-Nonce'], b['X-Nonce']);
  assert.notEqual(a['X-Sign'], b['X-Sign']);
  const ts = Number(a['X-Timestamp']);
  assert.ok(ts >= before && ts <= after, 'seconds, not milliseconds');
  assert.equal(isNonceWellFormed(a['X-Nonce']), true);
  assert.equal(isTimestampFresh(a['X-Timestamp'], after), true);
});

test('isTimestampFresh: ±300 s inclusive, decimal seconds only', () => {
  const now = 1700000000;
  assert.equal(isTimestampFresh(String(now), now), true);
  assert.equal(isTimestampFresh(String(now - 300), now), true);
  assert.equal(isTimestampFresh(String(now + 300), now), true);
  assert.equal(isTimestampFresh(String(now - 301), now), false);
  assert.equal(isTimestampFresh(String(now + 301), now), false);
  assert.equal(isTimestampFresh(String(now * 1000), now), false, 'milliseconds');
  for (const bad of ['', ' 1700000000', '1700000000.0', '-1', '+1700000000', '1e9', '0x6553f100', '１７００000000', undefined]) {
    assert.equal(isTimestampFresh(bad as string, now), false, String(bad));
  }
  assert.equal(isTimestampFresh(String(now - 10), now, 5), false, 'custom window');
});

test('isNonceWellFormed: 8..128 UTF-8 bytes after trimming', () => {
  assert.equal(isNonceWellFormed('12345678'), true);
  assert.equal(isNonceWellFormed('1234567'), false);
  assert.equal(isNonceWellFormed('  1234567  '), false, 'trimmed first');
  assert.equal(isNonceWellFormed('x'.repeat(128)), true);
  assert.equal(isNonceWellFormed('x'.repeat(129)), false);
  assert.equal(isNonceWellFormed('éééé'), true, '4 characters, 8 bytes');
  assert.equal(isNonceWellFormed('🚀'.repeat(32)), true, '128 bytes');
  assert.equal(isNonceWellFormed('🚀'.repeat(33)), false, '132 bytes');
  assert.equal(isNonceWellFormed(undefined), false);
  assert.equal(isNonceWellFormed(''), false);
});

// A client signs the object it serializes; a server signs what JSON.parse gives it. For every
// contract-valid body (scalars only) both must agree, whatever the values.
test('property: client-side and server-side signatures agree for random JSON bodies (seeded)', () => {
  const r = prng(7);
  const alphabet = 'aZ09_-=&?/ %+.,:"{}[]éü東🚀';
  for (let i = 0; i < 500; i++) {
    const body: Record<string, unknown> = {};
    const query: Record<string, string> = {};
    for (let j = r.int(8); j > 0; j--) {
      const name = r.pick(['a', 'b', 'A', '_x', 'sign', 'nonce', 'amount_wei', 'chain_id', 'x_json']);
      const kind = r.int(7);
      body[name] = kind === 0 ? r.string(alphabet, r.int(6)) : kind === 1 ? r.int(2 ** 31) - 2 ** 30 : kind === 2 ? r.next() < 0.5 : kind === 3 ? null : kind === 4 ? '' : kind === 5 ? r.next() * 1000 : r.bigint(64).toString();
    }
    for (let j = r.int(4); j > 0; j--) query[r.pick(['a', 'q', 'sign', 'Q'])] = r.string(alphabet, r.int(5));
    const input = { apiKey: 'key_A', timestamp: String(1700000000 + i), nonce: `n-${i}-xxxxxx`, query, body };
    const sig = signRequest(SECRET, input);
    const wire = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
    assert.equal(verifyRequestSignature(SECRET, { ...input, body: wire }, sig), true, JSON.stringify(input));
    const params = buildSignParams(input);
    assert.equal('sign' in params, false);
    assert.equal(Object.values(params).includes(''), false);
    assert.equal(params.nonce, input.nonce);
  }
});

// The signer builds its string without the intermediate plain object (a hot path of the server):
// it must stay byte-identical to the documented steps — buildSignParams, canonicalString, then
// HMAC-SHA256 under the secret's UTF-8 bytes — for any names (including "__proto__", empty values
// and names that sort before digits) and any secret.
test('property: signRequest equals the documented steps spelled out (seeded)', () => {
  const r = prng(2104);
  const alphabet = 'aZ09_-=&?/ %+.,:"éü東🚀';
  for (let i = 0; i < 500; i++) {
    const body: Record<string, unknown> = {};
    const query: Record<string, string> = Object.create(null);
    for (let j = r.int(7); j > 0; j--) {
      const name = r.pick(['a', 'B', '__proto__', '10', '2', 'sign', 'api_key', 'x', 'Ä']);
      const value = r.int(3) === 0 ? '' : r.int(2) === 0 ? r.string(alphabet, r.int(6)) : r.int(1000);
      // An own property even for "__proto__", as JSON.parse creates it.
      Object.defineProperty(body, name, { value, enumerable: true, writable: true, configurable: true });
    }
    for (let j = r.int(3); j > 0; j--) query[r.pick(['a', '__proto__', '2', 'q'])] = r.int(3) === 0 ? '' : r.string(alphabet, r.int(4));
    const secret = r.string(alphabet, 1 + r.int(80)); // beyond 64 bytes too: HMAC hashes long keys first
    const input = { apiKey: 'key_A', timestamp: String(1700000000 + i), nonce: `n-${i}-xxxxxx`, query, body };
    const spelled = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(canonicalString(buildSignParams(input)), 'utf8')
      .digest('hex');
    assert.equal(signRequest(secret, input), spelled, JSON.stringify({ secret, input }));
    assert.equal(verifyRequestSignature(secret, input, spelled), true);
  }
});

test('property: flipping any one hex digit of a signature fails verification (seeded)', () => {
  const r = prng(99);
  const input = base({ body: { a: '1' } });
  const sig = signRequest(SECRET, input);
  for (let i = 0; i < sig.length; i++) {
    const digits = '0123456789abcdef'.replace(sig[i]!, '');
    const bad = sig.slice(0, i) + digits[r.int(digits.length)] + sig.slice(i + 1);
    assert.equal(verifyRequestSignature(SECRET, input, bad), false);
  }
});
