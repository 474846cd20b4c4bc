import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Challenge, Credential, Method, Receipt, z } from 'mppx';
import { Mppx } from 'mppx/client';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { backends } from '../helpers/db.ts';
import { finalize, pay, PRICE, ROUTE, startMppStack, type MppStack } from './mpp-fixtures.ts';

/**
 * The IETF `Payment` scheme end to end with the unmodified `mppx` client (pinned devDependency): a
 * resource server protected by Tollgate relays each request to `POST /mpp/v1/payment`; mppx gets
 * the 402 `WWW-Authenticate: Payment` challenge, pays it through a client method that sends an
 * ERC-20 transfer on anvil and answers with a `hash` credential, retries, and receives the resource
 * with `Payment-Receipt`. The method plug-in is the only test code mppx runs: mppx's own EVM method
 * signs EIP-3009 authorizations, which need a settling executor Tollgate does not have yet.
 */
for (const backend of backends()) {
  describe(`mpp Payment scheme with the mppx client (${backend})`, () => {
    let st: MppStack;
    let resource: Server;
    let resourceUrl: string;
    const seen: { auth: string | undefined; status: number }[] = [];

    before(async () => {
      st = await startMppStack(backend);
      // The merchant's resource server: every request is priced by Tollgate.
      resource = createServer(async (req, res) => {
        const r = await fetch(`${st.s.url}/mpp/v1/payment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) },
          body: JSON.stringify({ merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: ROUTE }),
        });
        seen.push({ auth: req.headers.authorization, status: r.status });
        if (r.status === 200) {
          res.writeHead(200, { 'content-type': 'application/json', 'payment-receipt': r.headers.get('payment-receipt')! });
          res.end(JSON.stringify({ data: 'the paid resource' }));
          return;
        }
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        const www = r.headers.get('www-authenticate');
        if (www) headers['www-authenticate'] = www;
        res.writeHead(r.status, headers);
        res.end(await r.text());
      });
      await new Promise<void>((ok) => resource.listen(0, '127.0.0.1', ok));
      resourceUrl = `http://127.0.0.1:${(resource.address() as AddressInfo).port}/api/data`;
    });
    after(async () => {
      await new Promise((ok) => resource?.close(ok));
      await st?.close();
    });

    /** A `Payment` client method for Tollgate's `evm` charge with `hash` credentials, built with mppx's public API. */
    function hashCharge(payerIndex: number, amount?: bigint) {
      const p = st.dev.payers[payerIndex]!;
      const method = Method.from({
        name: 'evm',
        intent: 'charge',
        schema: {
          credential: { payload: z.object({ type: z.literal('hash'), hash: z.string() }) },
          request: z.object({ amount: z.string(), currency: z.string(), recipient: z.string(), methodDetails: z.object({ chainId: z.number() }) }),
        },
      });
      return Method.toClient(method, {
        async createCredential({ challenge }) {
          const req = challenge.request as { amount: string; recipient: string; methodDetails: { chainId: number } };
          const hash = await pay(st, payerIndex, req.recipient, amount ?? BigInt(req.amount));
          await finalize(st);
          return Credential.serialize({ challenge, payload: { type: 'hash', hash }, source: `did:pkh:eip155:${req.methodDetails.chainId}:${p.address}` });
        },
      });
    }

    it('mppx pays a protected resource: 402 challenge → hash credential → 200 with Payment-Receipt', async () => {
      const mppx = Mppx.create({ methods: [hashCharge(0)], polyfill: false });
      const res = await mppx.fetch(resourceUrl);
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { data: 'the paid resource' });
      const receipt = Receipt.fromResponse(res);
      assert.equal(receipt.status, 'success');
      assert.match(receipt.reference, /^0x[0-9a-f]{64}$/);
      const jws = (receipt as unknown as { receipt: string }).receipt;
      const v = verifyMppReceipt(jws, (await st.s.request('GET', '/.well-known/jwks.json')).body);
      assert.ok(v.ok);
      assert.deepEqual([v.claims.payer, v.claims.amount_wei, v.claims.tx_hash], [st.dev.payers[0]!.address.toLowerCase(), PRICE.toString(), receipt.reference]);
      assert.deepEqual(seen.slice(-2).map((x) => [x.auth === undefined, x.status]), [[true, 402], [false, 200]]);
    });

    it('a refused credential (under-payment) is answered with a fresh challenge naming the code', async () => {
      const mppx = Mppx.create({ methods: [hashCharge(1, PRICE - 1n)], polyfill: false, maxPaymentRetries: 1 });
      const res = await mppx.fetch(resourceUrl);
      assert.equal(res.status, 402);
      const body = await res.json();
      assert.equal(body.code, 'transfer_not_found');
      assert.match(res.headers.get('www-authenticate')!, /^Payment id="ch_/);
      assert.notEqual(body.challenge_id, undefined);
    });

    it('a credential replaying a paid transaction for a new challenge gets a fresh challenge (tx_already_claimed)', async () => {
      const first = await fetch(resourceUrl);
      assert.equal(first.status, 402);
      const www = first.headers.get('www-authenticate')!;
      const challenge = Challenge.deserialize(www);
      // Take the transaction of the first test's receipt from the merchant's payments list.
      const list = await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments');
      const tx = list.body.data[0].tx_hash as string;
      const cred = Credential.serialize({ challenge, payload: { type: 'hash', hash: tx }, source: `did:pkh:eip155:${st.dev.chainId}:${st.dev.payers[0]!.address}` });
      const res = await fetch(resourceUrl, { headers: { authorization: cred } });
      assert.equal(res.status, 402);
      assert.equal((await res.json()).code, 'tx_already_claimed');
    });
  });
}
