import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { verifyMppReceipt } from '../src/receipts.ts';

/** A receipt signed the way the gateway signs one (compact JWS, EdDSA, kid). */
function signed(claims: object, header: object = { alg: 'EdDSA', typ: 'JWT', kid: 'rk_a' }) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return { jws: `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`, jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid: 'rk_a' }] } };
}

describe('verifyMppReceipt', () => {
  const claims = { challenge_id: 'ch_x', amount_wei: '1000' };
  it('accepts a receipt signed by a key of the set and returns its claims', () => {
    const { jws, jwks } = signed(claims);
    assert.deepEqual(verifyMppReceipt(jws, jwks), { ok: true, kid: 'rk_a', claims });
  });
  it('refuses altered claims, another key, alg none, and garbage', () => {
    const { jws, jwks } = signed(claims);
    const [h, , s] = jws.split('.');
    const altered = `${h}.${Buffer.from(JSON.stringify({ ...claims, amount_wei: '9' })).toString('base64url')}.${s}`;
    assert.deepEqual(verifyMppReceipt(altered, jwks), { ok: false, reason: 'bad_signature' });
    assert.deepEqual(verifyMppReceipt(jws, signed(claims).jwks), { ok: false, reason: 'bad_signature' });
    assert.deepEqual(verifyMppReceipt(jws, { keys: [] }), { ok: false, reason: 'unknown_kid' });
    const none = signed(claims, { alg: 'none', kid: 'rk_a' });
    assert.deepEqual(verifyMppReceipt(none.jws, none.jwks), { ok: false, reason: 'unsupported_algorithm' });
    assert.deepEqual(verifyMppReceipt('a.b', jwks), { ok: false, reason: 'malformed' });
    // A document the same key signs that is not a receipt (the quick-pay manifest's typ), validly signed.
    const manifest = signed(claims, { alg: 'EdDSA', typ: 'tollgate-quickpay-manifest+jws', kid: 'rk_a' });
    assert.deepEqual(verifyMppReceipt(manifest.jws, manifest.jwks), { ok: false, reason: 'not_a_receipt' });
    const untyped = signed(claims, { alg: 'EdDSA', kid: 'rk_a' });
    assert.deepEqual(verifyMppReceipt(untyped.jws, untyped.jwks), { ok: false, reason: 'not_a_receipt' });
    assert.deepEqual(verifyMppReceipt('e30.bm90IGpzb24.c2ln', jwks), { ok: false, reason: 'malformed' });
  });
});
