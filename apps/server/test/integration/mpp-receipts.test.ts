import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { backends } from '../helpers/db.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { challenge, finalize, pay, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';

/**
 * Receipt keys: generated on first use, stored encrypted (no private key material in the table in
 * clear), rotated by the operator (route and CLI) with the old key still published, so receipts
 * signed before a rotation keep verifying.
 */
for (const backend of backends()) {
  describe(`mpp receipt keys (${backend})`, () => {
    let st: MppStack;
    let payer: string;
    before(async () => {
      st = await startMppStack(backend);
      payer = st.dev.payers[0]!.address.toLowerCase();
    });
    after(() => st?.close());

    async function paidReceipt(tag: string): Promise<string> {
      const c = (await challenge(st, payer, `GET:api:data:${tag}`)).body;
      const tx = await pay(st, 0, c.recipient);
      await finalize(st);
      const r = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
      assert.equal(r.status, 200, r.text);
      return r.body.receipt;
    }
    const kidOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString()).kid;

    it('publishes one Ed25519 key; its private half is stored encrypted', async () => {
      const jwks = (await st.s.request('GET', '/.well-known/jwks.json')).body;
      assert.equal(jwks.keys.length, 1);
      assert.deepEqual([jwks.keys[0].kty, jwks.keys[0].crv, jwks.keys[0].alg], ['OKP', 'Ed25519', 'EdDSA']);
      assert.equal(jwks.keys[0].d, undefined);
      const { rows } = await st.s.db.query<{ private_ciphertext: string }>('SELECT private_ciphertext FROM mpp_receipt_keys');
      assert.match(rows[0]!.private_ciphertext, /^v1:[^:]+:[^:]+:[^:]+$/);
      assert.doesNotMatch(rows[0]!.private_ciphertext, /BEGIN|MC4CAQAwBQYDK2Vw/); // no PEM, no clear PKCS#8 prefix
    });

    it('rotation (admin route, then CLI): new receipts use the new kid, old receipts still verify', async () => {
      const before = await paidReceipt('k1');
      const oldKid = kidOf(before);
      const rot = await st.s.admin('POST', '/admin/v1/mpp/receipt-keys');
      assert.equal(rot.status, 201, rot.text);
      assert.notEqual(rot.body.kid, oldKid);
      assert.equal((await st.s.request('POST', '/admin/v1/mpp/receipt-keys')).status, 401);
      const afterRot = await paidReceipt('k2');
      assert.equal(kidOf(afterRot), rot.body.kid);
      const jwks = (await st.s.request('GET', '/.well-known/jwks.json')).body;
      assert.deepEqual(
        jwks.keys.map((k: any) => k.kid),
        [rot.body.kid, oldKid],
      );
      assert.ok(verifyMppReceipt(before, jwks).ok);
      assert.ok(verifyMppReceipt(afterRot, jwks).ok);
      // With only the new key, the old receipt is unknown, not silently valid.
      assert.deepEqual(verifyMppReceipt(before, { keys: jwks.keys.slice(0, 1) }), { ok: false, reason: 'unknown_kid' });

      const p = spawnTollgate(['mpp', 'rotate-receipt-key', '--json'], { TOLLGATE_URL: st.s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
      const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
      assert.equal(code, 0, p.output());
      const cliKid = JSON.parse(p.output()).kid;
      const three = (await st.s.request('GET', '/.well-known/jwks.json')).body.keys.map((k: any) => k.kid);
      assert.deepEqual(three, [cliKid, rot.body.kid, oldKid]);
    });
  });
}
