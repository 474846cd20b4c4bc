// Machine payments and x402 settlements in the portal (issue 29 item 9), on a real anvil chain: a
// paid machine payment is listed with its signed receipt (verifiable with the gateway's JWKS) and
// an x402 settlement with its transaction, for the merchant paid only; a bad page cursor is a 400.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import { challenge, finalize, pay, startMppStack, verify, type MppStack } from '../integration/mpp-fixtures.ts';
import { x402Body } from '../integration/x402-fixtures.ts';

for (const backend of backends()) {
  describe(`portal: machine payments and x402 settlements (${backend})`, () => {
    let st: MppStack;
    let p: PortalClient;
    before(async () => {
      st = await startMppStack(backend, { settle: true });
      p = new PortalClient(st.s);
      assert.equal((await p.login('owner@machine.example', await addPortalUser(st.s, st.m.merchantId, 'owner@machine.example', 'viewer'))).status, 200);
    });
    after(() => st?.close());

    test('a paid machine payment with its receipt; an x402 settlement with its transaction', async () => {
      const payer = st.dev.payers[1]!.address.toLowerCase();
      const c = (await challenge(st, payer)).body;
      const tx = await pay(st, 1, c.recipient);
      await finalize(st);
      assert.equal((await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac })).status, 200);

      const mpp = await p.call('GET', '/portal/api/mpp/payments');
      assert.equal(mpp.status, 200, mpp.text);
      const api = (await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments')).body.data;
      assert.deepEqual(mpp.body.data, api, 'the same records as the merchant API (no explorer configured)');
      const r = mpp.body.data[0];
      assert.deepEqual([r.challenge_id, r.tx_hash, r.payer], [c.challenge_id, tx, payer]);
      const jwks = createLocalJWKSet((await st.s.request('GET', '/.well-known/jwks.json')).body);
      const { payload } = await jwtVerify(r.receipt, jwks);
      assert.equal(payload.challenge_id, c.challenge_id, 'the receipt names the challenge it pays');

      const body = await x402Body({ chainId: st.dev.chainId, token: st.usdc, payTo: MERCHANT_WALLET, nowSeconds: Math.floor(Date.now() / 1000), payerKey: st.dev.payers[4]!.privateKey, amount: 25_000n });
      const settled = await st.s.request('POST', '/x402/v2/settle', { body });
      assert.equal(settled.body.success, true, settled.text);
      const x = await p.call('GET', '/portal/api/x402/settlements');
      assert.equal(x.status, 200, x.text);
      assert.equal(x.body.data.length, 1);
      assert.deepEqual([x.body.data[0].tx_hash, x.body.data[0].amount_wei, x.body.data[0].pay_to], [settled.body.transaction, '25000', MERCHANT_WALLET]);

      const bad = await p.call('GET', '/portal/api/x402/settlements', undefined, { query: { before: 'yesterday' } });
      assert.deepEqual([bad.status, bad.body.code, bad.body.param], [400, 'invalid_request', 'before']);
      const other = await st.s.createMerchant({ name: 'Other' });
      const op = new PortalClient(st.s);
      assert.equal((await op.login('owner@other.example', await addPortalUser(st.s, other.merchantId, 'owner@other.example'))).status, 200);
      assert.deepEqual((await op.call('GET', '/portal/api/mpp/payments')).body.data, []);
      assert.deepEqual((await op.call('GET', '/portal/api/x402/settlements')).body.data, []);
    });
  });
}
