import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Challenge, Credential, Method, Receipt, z } from 'mppx';
import { Mppx } from 'mppx/client';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { backends } from '../helpers/db.ts';
import { finalize, pay, PRICE, ROUTE, signPayerProof, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';

/**
 * The IETF `Payment` scheme end to end with the unmodified `mppx` client (pinned devDependency): a
 * resource server protected by Tollgate relays each request to `POST /mpp/v1/payment`; mppx gets
 * the 402 `WWW-Authenticate: Payment` challenge, pays it through a client method that sends an
 * ERC-20 transfer on anvil and answers with a `hash` credential, retries, and receives the resource
 * with `Payment-Receipt`. The method plug-in is the only test code mppx runs (mppx's own EVM method
 * signs EIP-3009 authorizations: mpp-authorization.test.ts). The resource server passes no payer, so
 * its challenges are open: a `hash` credential must carry the payer's proof (payload.signature), and
 * one naming somebody else's transfer is refused without claiming it, on this door and the JSON one.
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
          credential: { payload: z.object({ type: z.literal('hash'), hash: z.string(), signature: z.string() }) },
          request: z.object({ amount: z.string(), currency: z.string(), recipient: z.string(), methodDetails: z.object({ chainId: z.number() }) }),
        },
      });
      return Method.toClient(method, {
        async createCredential({ challenge }) {
          const req = challenge.request as { amount: string; recipient: string; methodDetails: { chainId: number } };
          const hash = await pay(st, payerIndex, req.recipient, amount ?? BigInt(req.amount));
          await finalize(st);
          const signature = await signPayerProof(st, payerIndex, challenge);
          return Credential.serialize({ challenge, payload: { type: 'hash', hash, signature }, source: `did:pkh:eip155:${req.methodDetails.chainId}:${p.address}` });
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
      assert.deepEqual(
        seen.slice(-2).map((x) => [x.auth === undefined, x.status]),
        [
          [true, 402],
          [false, 200],
        ],
      );
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
      const signature = await signPayerProof(st, 0, challenge);
      const cred = Credential.serialize({ challenge, payload: { type: 'hash', hash: tx, signature }, source: `did:pkh:eip155:${st.dev.chainId}:${st.dev.payers[0]!.address}` });
      const res = await fetch(resourceUrl, { headers: { authorization: cred } });
      assert.equal(res.status, 402);
      assert.equal((await res.json()).code, 'tx_already_claimed');
    });

    /** A fresh open challenge from the resource server (no credential sent). */
    async function openChallenge() {
      const r = await fetch(resourceUrl);
      assert.equal(r.status, 402);
      return Challenge.deserialize(r.headers.get('www-authenticate')!);
    }
    const payments = async () => (await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments')).body.data as { tx_hash: string; challenge_id: string }[];
    const paymentEvents = async () => (await st.s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE event = 'mpp.payment.confirmed'`)).rows[0]!.n;

    it("an open challenge refuses a hash credential naming somebody else's transfer (source = the victim): nothing claimed, the victim's proof then pays", async () => {
      const victim = st.dev.payers[4]!;
      // Both hold open challenges before the victim pays: the attacker watches the chain for a transfer to the recipient.
      const mine = await openChallenge();
      const theirs = await openChallenge();
      const tx = await pay(st, 4, (mine.request as { recipient: string }).recipient);
      await finalize(st);
      const [paidBefore, eventsBefore] = [await payments(), await paymentEvents()];
      const source = `did:pkh:eip155:${st.dev.chainId}:${victim.address}`;
      const present = async (challenge: typeof theirs, payload: Record<string, string>) => {
        const r = await fetch(resourceUrl, { headers: { authorization: Credential.serialize({ challenge, payload, source }) } });
        return { status: r.status, code: (await r.json()).code as string | undefined };
      };
      // A bare transaction hash proves nothing about who sent it.
      assert.deepEqual(await present(theirs, { type: 'hash', hash: tx }), { status: 402, code: 'payer_proof_required' });
      // The attacker's own signature does not make it the victim; nor does the victim's proof for another challenge.
      assert.deepEqual(await present(theirs, { type: 'hash', hash: tx, signature: await signPayerProof(st, 5, theirs) }), { status: 402, code: 'payer_proof_invalid' });
      assert.deepEqual(await present(theirs, { type: 'hash', hash: tx, signature: await signPayerProof(st, 4, mine) }), { status: 402, code: 'payer_proof_invalid' });
      // Nothing claimed, nothing announced.
      assert.deepEqual(await payments(), paidBefore);
      assert.equal(await paymentEvents(), eventsBefore);
      const open = await st.s.db.query<{ status: string }>('SELECT status FROM mpp_challenges WHERE id = $1', [theirs.id]);
      assert.equal(open.rows[0]!.status, 'OPEN');
      // The transfer is still the victim's: its own proof pays its own challenge.
      const ok = await fetch(resourceUrl, { headers: { authorization: Credential.serialize({ challenge: mine, payload: { type: 'hash', hash: tx, signature: await signPayerProof(st, 4, mine) }, source }) } });
      assert.equal(ok.status, 200, await ok.clone().text());
      const claims = verifyMppReceipt((Receipt.fromResponse(ok) as unknown as { receipt: string }).receipt, (await st.s.request('GET', '/.well-known/jwks.json')).body);
      assert.ok(claims.ok);
      assert.deepEqual([claims.claims.challenge_id, claims.claims.payer, claims.claims.tx_hash], [mine.id, victim.address.toLowerCase(), tx]);
    });

    it("the JSON verify refuses an open challenge (it carries no payer proof): the victim's transfer stays unclaimed and pays the victim's challenge", async () => {
      const victim = st.dev.payers[6]!.address.toLowerCase();
      // An open challenge through the Payment door (its 402 body has the id and MAC), then the victim's own, bound one.
      const open = await st.s.request('POST', '/mpp/v1/payment', { body: { merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: ROUTE } });
      assert.equal(open.status, 402);
      const bound = await st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: ROUTE, payer_addr: victim } });
      assert.equal(bound.status, 402);
      const tx = await pay(st, 6, bound.body.recipient);
      await finalize(st);
      const eventsBefore = await paymentEvents();
      const stolen = await verify(st, { challenge_id: open.body.challenge_id, tx_hash: tx, payer_addr: victim, mac: open.body.mac });
      assert.equal(stolen.status, 401, stolen.text);
      assert.equal(stolen.body.code, 'payer_proof_required');
      assert.equal(
        (await payments()).some((p) => p.tx_hash === tx),
        false,
      );
      assert.equal(await paymentEvents(), eventsBefore);
      // A bound challenge needs no proof beyond the payer it was issued to.
      const paid = await verify(st, { challenge_id: bound.body.challenge_id, tx_hash: tx, payer_addr: victim, mac: bound.body.mac });
      assert.equal(paid.status, 200, paid.text);
      assert.deepEqual([paid.body.challenge_id, paid.body.payer], [bound.body.challenge_id, victim]);
    });
  });
}
