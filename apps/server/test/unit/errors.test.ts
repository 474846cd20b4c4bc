import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactPath } from '../../src/http/app.ts';
import { patternToRegex } from '../../src/http/errors.ts';

describe('patternToRegex', () => {
  const proof = patternToRegex('/api/v1/orders/:order_id/proof');

  it('matches concrete paths of the pattern, with or without a trailing slash', () => {
    assert.ok(proof.test('/api/v1/orders/ord_123/proof'));
    assert.ok(proof.test('/api/v1/orders/ord_123/proof/'));
    assert.ok(proof.test('/api/v1/orders/any-thing.at%20all/proof'));
  });

  it('a parameter is exactly one non-empty segment', () => {
    assert.equal(proof.test('/api/v1/orders//proof'), false);
    assert.equal(proof.test('/api/v1/orders/a/b/proof'), false);
  });

  it('is anchored at both ends', () => {
    assert.equal(proof.test('/api/v1/orders/ord_1/proof/extra'), false);
    assert.equal(proof.test('/x/api/v1/orders/ord_1/proof'), false);
    assert.equal(proof.test('/api/v1/orders/ord_1/proofs'), false);
    assert.equal(proof.test('api/v1/orders/ord_1/proof'), false);
  });

  it('static segments are literal: regex metacharacters are escaped', () => {
    const openapi = patternToRegex('/openapi.json');
    assert.ok(openapi.test('/openapi.json'));
    assert.equal(openapi.test('/openapiXjson'), false);
    const weird = patternToRegex('/a+b/(c)/[d]/e*/f?/$g^/h|i/:p');
    assert.ok(weird.test('/a+b/(c)/[d]/e*/f?/$g^/h|i/value'));
    assert.equal(weird.test('/aab/c/d/e/f/g/hi/value'), false);
  });

  it('handles several parameters and static paths', () => {
    const revoke = patternToRegex('/admin/v1/merchants/:merchant_id/api-keys/:api_key');
    assert.ok(revoke.test('/admin/v1/merchants/m1/api-keys/tg_test_abc'));
    assert.equal(revoke.test('/admin/v1/merchants/m1/api-keys'), false);
    const health = patternToRegex('/healthz');
    assert.ok(health.test('/healthz'));
    assert.equal(health.test('/healthz2'), false);
  });

  it('the root pattern matches only the root', () => {
    const root = patternToRegex('/');
    assert.ok(root.test('/'));
    assert.equal(root.test('/x'), false);
  });

  it('is case-sensitive like the router', () => {
    assert.equal(patternToRegex('/healthz').test('/HEALTHZ'), false);
  });
});

describe('redactPath', () => {
  it('redacts a checkout session id in a path segment', () => {
    assert.equal(redactPath('/checkout/v1/sessions/cs_AbC123_-xyz'), '/checkout/v1/sessions/cs_[redacted]');
    assert.equal(redactPath('/checkout/v1/sessions/cs_AbC123/bind'), '/checkout/v1/sessions/cs_[redacted]/bind');
  });

  it('redacts ids in the query string and every occurrence', () => {
    const out = redactPath('/pay/cs_first?checkout_id=cs_second&x=1');
    // Query values are redacted whatever they are (issue 12); names are kept.
    assert.equal(out, '/pay/cs_[redacted]?checkout_id=[redacted]&x=[redacted]');
    assert.equal(out.includes('first'), false);
    assert.equal(out.includes('second'), false);
  });

  it('leaves paths without a session id unchanged', () => {
    for (const p of ['/', '/api/v1/orders/ord_123', '/merchants/demo', '/admin/v1/merchants/m1/api-keys/tg_test_abc']) {
      assert.equal(redactPath(p), p);
    }
    assert.equal(redactPath('/admin/v1/merchants/m1/api-keys/tg_test_abc?x=1'), '/admin/v1/merchants/m1/api-keys/tg_test_abc?x=[redacted]');
  });

  it('removes all base64url characters of the id', () => {
    const id = 'cs_' + 'aZ09_-'.repeat(8);
    const out = redactPath(`/checkout/v1/sessions/${id}/status`);
    assert.equal(out, '/checkout/v1/sessions/cs_[redacted]/status');
  });

  it('a bare prefix has nothing to redact; one character after it is redacted', () => {
    assert.equal(redactPath('/x/cs_'), '/x/cs_');
    assert.equal(redactPath('/x/cs_a'), '/x/cs_[redacted]');
  });
});
