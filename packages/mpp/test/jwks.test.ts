import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { JwksCache } from '@tollgate/mpp';

/** JwksCache against a real JWKS server on loopback that counts its fetches. */
describe('JwksCache', () => {
  const keys: { kid: string; pub: KeyObject; priv: KeyObject }[] = [];
  let fetches = 0;
  let url: string;
  const server = createServer((_req, res) => {
    fetches++;
    // A little latency so concurrent verifies overlap with one fetch under way.
    setTimeout(
      () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            keys: keys.map((k) => ({ ...k.pub.export({ format: 'jwk' }), kid: k.kid, alg: 'EdDSA', use: 'sig' })),
          }),
        ),
      20,
    );
  });
  const addKey = (kid: string) => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    keys.push({ kid, pub: publicKey, priv: privateKey });
  };
  const jws = (kid: string, priv: KeyObject) => {
    const h = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid })).toString('base64url');
    const p = Buffer.from(JSON.stringify({ challenge_id: 'ch_x', amount_wei: '1' })).toString('base64url');
    return `${h}.${p}.${sign(null, Buffer.from(`${h}.${p}`), priv).toString('base64url')}`;
  };
  const cache = () => new JwksCache(url, { ttlMs: 600_000, unknownKidMs: 30_000, fetch, now: Date.now });

  before(async () => {
    addKey('k1');
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  after(() => new Promise<void>((ok) => server.close(() => ok())));

  it('20 concurrent verifies on a cold cache share one fetch; later ones use the cache', async () => {
    const c = cache();
    fetches = 0;
    const out = await Promise.all(Array.from({ length: 20 }, () => c.verify(jws('k1', keys[0]!.priv))));
    assert.ok(out.every((v) => v.ok));
    assert.equal(fetches, 1);
    assert.ok((await c.verify(jws('k1', keys[0]!.priv))).ok);
    assert.equal(fetches, 1);
  });

  it('a new kid (rotation) refetches once and verifies; a forged kid refetches once, then is remembered', async () => {
    const c = cache();
    assert.ok((await c.verify(jws('k1', keys[0]!.priv))).ok);
    addKey('k2');
    fetches = 0;
    assert.ok((await c.verify(jws('k2', keys[1]!.priv))).ok);
    assert.equal(fetches, 1);
    const { privateKey } = generateKeyPairSync('ed25519');
    const forged = jws('nope', privateKey);
    assert.deepEqual(await c.verify(forged), { ok: false, reason: 'unknown_kid' });
    assert.equal(fetches, 2);
    for (let i = 0; i < 5; i++) assert.deepEqual(await c.verify(forged), { ok: false, reason: 'unknown_kid' });
    assert.equal(fetches, 2);
  });

  it('a known kid with a signature of another key is bad_signature without a refetch', async () => {
    const c = cache();
    assert.ok((await c.verify(jws('k1', keys[0]!.priv))).ok);
    fetches = 0;
    assert.deepEqual(await c.verify(jws('k1', keys[1]!.priv)), { ok: false, reason: 'bad_signature' });
    assert.equal(fetches, 0);
  });
});
