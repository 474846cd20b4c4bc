import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { isRouteCanonical, requestExtendsRoute } from '../../src/mpp/canonical.ts';
import { challengeMac, checkChallengeId, deriveMacKeys, newChallengeId, type ChallengeTerms } from '../../src/mpp/mac.ts';
import { parseCredential } from '../../src/mpp/payment/credential.ts';
import { canonicalJson, parseChallengeParams, serializeChallenge } from '../../src/mpp/payment/header.ts';
import { payerProofTypedData, signatureProvesPayer } from '../../src/mpp/payment/proof.ts';
import { privateKeyToAccount } from 'viem/accounts';

const keys = deriveMacKeys(randomBytes(32));

describe('mpp challenge ids and MACs', () => {
  it('an id carries its expiry and verifies only with its key, unaltered', () => {
    const id = newChallengeId(keys, 1_900_000_000);
    assert.equal(checkChallengeId(keys, id), 1_900_000_000);
    assert.equal(checkChallengeId(deriveMacKeys(randomBytes(32)), id), undefined);
    for (let i = 3; i < id.length; i++) {
      const c = id[i] === 'A' ? 'B' : 'A';
      assert.equal(checkChallengeId(keys, id.slice(0, i) + c + id.slice(i + 1)), undefined, `position ${i}`);
    }
    assert.equal(checkChallengeId(keys, id + 'A'), undefined);
    assert.equal(checkChallengeId(keys, 'ord_' + id.slice(3)), undefined);
  });

  it('the MAC changes with every term, including request_canonical', () => {
    const t: ChallengeTerms = {
      challengeId: newChallengeId(keys, 1_900_000_000),
      merchantId: 'm1',
      routeCanonical: 'GET:a',
      requestCanonical: 'GET:a:1',
      payerAddr: '0x' + '1'.repeat(40),
      chainId: 1,
      tokenContract: '0x' + '2'.repeat(40),
      recipient: '0x' + '3'.repeat(40),
      amountWei: '10',
      routePricingVersion: 1,
      expiresAtSec: 1_900_000_000,
    };
    const base = challengeMac(keys, t);
    const changes: Partial<ChallengeTerms>[] = [
      { merchantId: 'm2' },
      { routeCanonical: 'GET:b' },
      { requestCanonical: 'GET:a:2' },
      { payerAddr: '0x' + '4'.repeat(40) },
      { chainId: 2 },
      { tokenContract: '0x' + '5'.repeat(40) },
      { recipient: '0x' + '6'.repeat(40) },
      { amountWei: '9' },
      { routePricingVersion: 2 },
      { expiresAtSec: 1_900_000_001 },
    ];
    for (const c of changes) assert.notEqual(challengeMac(keys, { ...t, ...c }), base, JSON.stringify(c));
    // Address case does not matter (EIP-55 input, lowercase storage).
    assert.equal(challengeMac(keys, { ...t, payerAddr: t.payerAddr.toUpperCase().replace('0X', '0x') }), base);
  });
});

describe('mpp canonical names', () => {
  it('accepts METHOD:seg[:seg…] and refuses the rest', () => {
    for (const ok of ['GET:api:data', 'POST:v1', 'DELETE:a:b:c', 'GET:x%20y']) assert.ok(isRouteCanonical(ok), ok);
    for (const bad of ['GET', 'get:a', 'GET:', 'GET::a', 'GET:a b', 'GET:a/b', 'GET:"a"', 'FETCH:a', `GET:${'a'.repeat(600)}`]) assert.ok(!isRouteCanonical(bad), bad);
  });
  it('a request extends its route only at a segment boundary', () => {
    assert.ok(requestExtendsRoute('GET:api:data', 'GET:api:data'));
    assert.ok(requestExtendsRoute('GET:api:data:42', 'GET:api:data'));
    assert.ok(!requestExtendsRoute('GET:api:database', 'GET:api:data'));
    assert.ok(!requestExtendsRoute('POST:api:data', 'GET:api:data'));
  });
});

describe('Payment challenge header', () => {
  it('serializes parameters in order with a base64url canonical-JSON request, and parses back', () => {
    const h = serializeChallenge({ id: 'ch_x', realm: 'pay.example', method: 'evm', intent: 'charge', request: { b: 1, a: { d: 'x', c: ['y'] } }, expires: '2030-01-01T00:00:00.000Z' });
    assert.match(h, /^Payment id="ch_x", realm="pay.example", method="evm", intent="charge", request="[A-Za-z0-9_-]+", expires="2030-01-01T00:00:00.000Z"$/);
    const p = parseChallengeParams(h);
    assert.equal(Buffer.from(p.request!, 'base64url').toString(), '{"a":{"c":["y"],"d":"x"},"b":1}');
    assert.equal(canonicalJson({ z: undefined, y: null }), '{"y":null}');
    assert.throws(() => serializeChallenge({ id: 'a\nb', realm: 'r', method: 'm', intent: 'i', request: {}, expires: 'e' }));
  });
});

describe('payer proof of an open challenge (payment/proof.ts) and the hash credential carrying it', () => {
  const payer = privateKeyToAccount(`0x${'11'.repeat(32)}`);
  const other = privateKeyToAccount(`0x${'22'.repeat(32)}`);
  const terms = { account: payer.address.toLowerCase(), chainId: 8453, challengeId: 'ch_abc', realm: 'pay.example' };
  const sign = (a = payer, t = terms) => a.signTypedData(payerProofTypedData({ ...t, account: a.address }));

  it("proves only the signer's address, for the chain, challenge and realm it signed", async () => {
    const sig = await sign();
    assert.equal(await signatureProvesPayer(sig, terms), true);
    assert.equal(await signatureProvesPayer(await sign(other), terms), false, 'another key');
    assert.equal(await signatureProvesPayer(sig, { ...terms, account: other.address.toLowerCase() }), false, 'another account named');
    assert.equal(await signatureProvesPayer(sig, { ...terms, challengeId: 'ch_abd' }), false, 'another challenge');
    assert.equal(await signatureProvesPayer(sig, { ...terms, realm: 'evil.example' }), false, 'another realm');
    assert.equal(await signatureProvesPayer(sig, { ...terms, chainId: 1 }), false, 'another chain');
    assert.equal(await signatureProvesPayer(`0x${'00'.repeat(65)}`, terms), false, 'garbage does not throw');
  });

  it('parseCredential takes an optional 65-byte payload.signature on hash credentials', async () => {
    const cred = (payload: object) => `Payment ${Buffer.from(JSON.stringify({ challenge: { id: 'ch_abc' }, payload, source: `did:pkh:eip155:8453:${payer.address}` })).toString('base64url')}`;
    const hash = `0x${'ab'.repeat(32)}`;
    const sig = await sign();
    assert.deepEqual(parseCredential(cred({ type: 'hash', hash, signature: sig.toUpperCase().replace('0X', '0x') })), { kind: 'hash', challengeId: 'ch_abc', txHash: hash, payer: payer.address.toLowerCase(), sourceChainId: 8453, signature: sig });
    assert.equal((parseCredential(cred({ type: 'hash', hash })) as { signature?: string }).signature, undefined);
    for (const signature of ['0x12', 42, `0x${'zz'.repeat(65)}`]) assert.equal(parseCredential(cred({ type: 'hash', hash, signature })).kind, 'malformed');
  });
});
