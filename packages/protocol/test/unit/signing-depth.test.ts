// Signing a hostile body must be total: a field nested 10,000 deep (what JSON.parse happily builds
// from 20 KB of brackets) once overflowed the stack inside JSON.stringify (issue 12). It now throws
// a TypeError, which a server maps to 400 like any other unsignable body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonDepthExceeds, MAX_SIGN_DEPTH, signRequest, verifyRequestSignature } from '../../src/signing.ts';

const base = { apiKey: 'key_depth', timestamp: '1735689600', nonce: 'nonce-depth-0001' };

function deep(depth: number): unknown {
  return JSON.parse('['.repeat(depth) + ']'.repeat(depth));
}

test('jsonDepthExceeds measures nesting without recursion', () => {
  assert.equal(jsonDepthExceeds('x', 0), false);
  assert.equal(jsonDepthExceeds({}, 0), true);
  assert.equal(jsonDepthExceeds({}, 1), false);
  assert.equal(jsonDepthExceeds({ a: [1] }, 1), true);
  assert.equal(jsonDepthExceeds({ a: [1] }, 2), false);
  assert.equal(jsonDepthExceeds(deep(100_000), 64), true);
  assert.equal(jsonDepthExceeds(deep(64), 64), false);
});

test('a body field nested beyond MAX_SIGN_DEPTH throws a TypeError, never a RangeError', () => {
  for (const depth of [MAX_SIGN_DEPTH + 1, 10_000, 100_000]) {
    const body = { a: deep(depth) };
    assert.throws(
      () => signRequest('secret', { ...base, body }),
      (e: unknown) => e instanceof TypeError && /nests deeper/.test((e as Error).message),
    );
    assert.throws(() => verifyRequestSignature('secret', { ...base, body }, 'f'.repeat(64)), TypeError);
  }
});

test('nesting up to the bound still signs as its JSON text', () => {
  const body = { a: deep(MAX_SIGN_DEPTH) };
  const sig = signRequest('secret', { ...base, body });
  assert.equal(sig, signRequest('secret', { ...base, body: { a: JSON.stringify(body.a) } }));
});
