import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Challenge, Credential, Receipt } from 'mppx';
import { Mppx } from 'mppx/client';
import { evm } from 'mppx/evm/client';
import { createPublicClient, http, keccak256, parseAbi, stringToBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { finalize, PRICE, ROUTE, startMppStack, type MppStack } from './mpp-fixtures.ts';
import { USDC_DOMAIN } from './x402-fixtures.ts';

/**
 * The `authorization` credential of the `Payment` scheme with the UNMODIFIED mppx client and its own
 * EVM charge method (`mppx/evm/client`, which signs EIP-3009 `transferWithAuthorization` with
 * nonce = keccak256(challenge id ‖ realm)): a resource server relays each request to Tollgate's
 * `POST /mpp/v1/payment`; Tollgate settles the signature with its executor key on anvil, answers
 * 202 while the settlement is not final, and 200 with `Payment-Receipt` when the same credential is
 * presented again after finality. Refusals (signed by viem, real signatures) send nothing.
 */
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

for (const backend of backends()) {
  describe(`mpp Payment scheme, authorization credentials settled by Tollgate (${backend})`, () => {
    let st: MppStack;
    let resource: Server;
    let resourceUrl: string;
    const seen: { auth: string | undefined; status: number }[] = [];
    /** The challenge the first test paid (the refusals test presents another authorization for it). */
    let paidChallenge: unknown;

    before(async () => {
      st = await startMppStack(backend, { settle: true });
      resource = createServer(async (req, res) => {
        const r = await fetch(`${st.s.url}/mpp/v1/payment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) },
          body: JSON.stringify({ merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: ROUTE }),
        });
        seen.push({ auth: req.headers.authorization, status: r.status });
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        for (const h of ['www-authenticate', 'payment-receipt', 'retry-after']) {
          const v = r.headers.get(h);
          if (v) headers[h] = v;
        }
        res.writeHead(r.status, headers);
        res.end(r.status === 200 ? JSON.stringify({ data: 'the paid resource' }) : await r.text());
      });
      await new Promise<void>((ok) => resource.listen(0, '127.0.0.1', ok));
      resourceUrl = `http://127.0.0.1:${(resource.address() as AddressInfo).port}/api/data`;
    });
    after(async () => {
      await new Promise((ok) => resource?.close(ok));
      await st?.close();
    });

    const balance = (addr: string) => createPublicClient({ transport: http(st.dev.rpcUrl) }).readContract({ address: st.usdc, abi: erc20, functionName: 'balanceOf', args: [addr as Hex] });

    it('the challenge offers authorization; mppx signs it, Tollgate settles it: 202 until final, then 200 with Payment-Receipt for the same credential', async () => {
      const payer = privateKeyToAccount(st.dev.payers[2]!.privateKey);
      const first = await fetch(resourceUrl);
      assert.equal(first.status, 402);
      const offered = Challenge.deserialize(first.headers.get('www-authenticate')!);
      assert.deepEqual((offered.request as { methodDetails: { credentialTypes: string[] } }).methodDetails.credentialTypes, ['hash', 'authorization']);

      const [payerBefore, walletBefore] = await Promise.all([balance(payer.address), balance(MERCHANT_WALLET)]);
      const mppx = Mppx.create({ methods: [evm.charge({ account: payer, authorization: USDC_DOMAIN })], polyfill: false });
      const res = await mppx.fetch(resourceUrl);
      const body = await res.json();
      // Settled and mined at depth 1; the chain's finality is 3 blocks.
      assert.equal(res.status, 202, JSON.stringify(body));
      assert.equal(body.status, 'pending_finality');
      assert.match(body.tx_hash, /^0x[0-9a-f]{64}$/);
      assert.equal(res.headers.get('retry-after'), '1');
      const credential = seen.at(-1)!.auth!;
      const parsed = Credential.deserialize(credential) as { challenge: { id: string; realm: string }; payload: { type: string; nonce: string; from: string } };
      assert.equal(parsed.payload.type, 'authorization');
      assert.equal(parsed.payload.nonce, keccak256(stringToBytes(`${parsed.challenge.id}${parsed.challenge.realm}`)));
      const paid = parsed.challenge.id;
      paidChallenge = parsed.challenge;
      assert.equal(await balance(payer.address), payerBefore - PRICE);
      assert.equal(await balance(MERCHANT_WALLET), walletBefore + PRICE);

      await finalize(st);
      const done = await fetch(resourceUrl, { headers: { authorization: credential } });
      assert.equal(done.status, 200, await done.clone().text());
      const receipt = Receipt.fromResponse(done);
      assert.equal(receipt.reference, body.tx_hash);
      const jws = (receipt as unknown as { receipt: string }).receipt;
      const v = verifyMppReceipt(jws, (await st.s.request('GET', '/.well-known/jwks.json')).body);
      assert.ok(v.ok, JSON.stringify(v));
      assert.deepEqual([v.claims.payer, v.claims.amount_wei, v.claims.tx_hash, v.claims.recipient, v.claims.challenge_id], [payer.address.toLowerCase(), PRICE.toString(), body.tx_hash, MERCHANT_WALLET, paid]);

      // Presented again: the same receipt, no second transaction, the payer charged once.
      const again = await fetch(resourceUrl, { headers: { authorization: credential } });
      assert.equal(again.status, 200);
      assert.equal((Receipt.fromResponse(again) as unknown as { receipt: string }).receipt, jws);
      const { rows } = await st.s.db.query<{ n: number; challenge_id: string }>(`SELECT count(*)::int AS n, min(a.challenge_id) AS challenge_id FROM x402_authorizations a JOIN settlements s ON s.order_id = a.id WHERE a.payer = $1`, [
        payer.address.toLowerCase(),
      ]);
      assert.deepEqual([rows[0]!.n, rows[0]!.challenge_id], [1, paid]);
      assert.equal(await balance(payer.address), payerBefore - PRICE);
      // The merchant sees it once, as a machine payment.
      const list = await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments');
      assert.ok(list.body.data.some((p: any) => p.challenge_id === paid && p.tx_hash === body.tx_hash));
    });

    /** A real EIP-3009 signature for the challenge of a fresh 402, with one term changed. */
    async function signedFor(change: { value?: bigint; nonce?: Hex; to?: Hex }, challenge?: unknown) {
      const c = (challenge ?? Challenge.deserialize((await fetch(resourceUrl)).headers.get('www-authenticate')!)) as ReturnType<typeof Challenge.deserialize>;
      const req = c.request as { amount: string; recipient: Hex; currency: Hex; methodDetails: { chainId: number } };
      const payer = privateKeyToAccount(st.dev.payers[3]!.privateKey);
      const message = {
        from: payer.address,
        to: change.to ?? req.recipient,
        value: change.value ?? BigInt(req.amount),
        validAfter: 0n,
        validBefore: BigInt(Math.floor(new Date(c.expires!).getTime() / 1000)),
        nonce: change.nonce ?? keccak256(stringToBytes(`${c.id}${c.realm}`)),
      };
      const signature = await payer.signTypedData({
        domain: { ...USDC_DOMAIN, chainId: req.methodDetails.chainId, verifyingContract: req.currency },
        types: {
          TransferWithAuthorization: [
            { name: 'from', type: 'address' },
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'validAfter', type: 'uint256' },
            { name: 'validBefore', type: 'uint256' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        message,
      });
      const payload = { type: 'authorization', from: payer.address, to: message.to, value: message.value.toString(), validAfter: '0', validBefore: message.validBefore.toString(), nonce: message.nonce, signature };
      return { challenge: c, payer, header: Credential.serialize({ challenge: c, payload, source: `did:pkh:eip155:${req.methodDetails.chainId}:${payer.address}` }) };
    }

    it('refusals send nothing: less than the price, a nonce not bound to the challenge, another recipient, a bad signature, a v byte that is no recovery id → 402 invalid_authorization', async () => {
      const payerBefore = await balance(privateKeyToAccount(st.dev.payers[3]!.privateKey).address);
      const cases = [await signedFor({ value: PRICE - 1n }), await signedFor({ nonce: keccak256(stringToBytes('another challenge')) }), await signedFor({ to: '0x000000000000000000000000000000000000dead' })];
      // A valid signature with its last byte of s changed (the signer no longer recovers).
      const good = await signedFor({});
      const cred = Credential.deserialize(good.header) as { payload: { signature: string } };
      const sig = cred.payload.signature;
      const forged = Credential.serialize({ ...(cred as object), payload: { ...cred.payload, signature: `${sig.slice(0, 130)}${sig.slice(130, 132) === '1b' ? '1c' : '1b'}` } } as never);
      // 65 bytes whose v byte is no recovery id: refused like any bad signature (it answered 500).
      const badV = Credential.serialize({ ...(cred as object), payload: { ...cred.payload, signature: `${sig.slice(0, 130)}11` } } as never);
      // Another payer's valid authorization for the challenge already paid: refused before settling.
      const late = await signedFor({}, paidChallenge);
      const consumed = await fetch(resourceUrl, { headers: { authorization: late.header } });
      assert.deepEqual([consumed.status, (await consumed.json()).code], [402, 'challenge_already_consumed']);
      for (const h of [...cases.map((c) => c.header), forged, badV]) {
        const r = await fetch(resourceUrl, { headers: { authorization: h } });
        const b = await r.json();
        assert.equal(r.status, 402, JSON.stringify(b));
        assert.equal(b.code, 'invalid_authorization', JSON.stringify(b));
        assert.match(r.headers.get('www-authenticate')!, /^Payment id="ch_/);
      }
      const { rows } = await st.s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM x402_authorizations WHERE payer = $1', [good.payer.address.toLowerCase()]);
      assert.equal(rows[0]!.n, 0);
      assert.equal(await balance(good.payer.address), payerBefore);
    });
  });
}
