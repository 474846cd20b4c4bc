import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, setAutomine } from '@tollgate/devchain';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { parseChallengeParams } from '../../src/mpp/payment/header.ts';
import { CHAIN_CLOCK_SKEW_MS } from '../../src/orders/claims.ts';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { challenge, FINALITY, finalize, pay, PRICE, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';

/**
 * /mpp/v1 challenge and verify on a real anvil chain: the 402 body and its `WWW-Authenticate:
 * Payment` header, 202 pending_inclusion / pending_finality with Retry-After, the signed receipt
 * (verified with the SDK against the JWKS), idempotent repeats, and every refusal with its code.
 */
for (const backend of backends()) {
  describe(`mpp challenge and verify on anvil (${backend})`, () => {
    let st: MppStack;
    let payer: string;
    before(async () => {
      st = await startMppStack(backend);
      payer = st.dev.payers[0]!.address.toLowerCase();
    });
    after(() => st?.close());

    it('402 challenge: body and WWW-Authenticate: Payment whose id is the challenge id', async () => {
      const r = await challenge(st, payer, `${ROUTE}:item42`);
      assert.equal(r.status, 402, r.text);
      const c = r.body;
      assert.match(c.challenge_id, /^ch_[A-Za-z0-9_-]{38}$/);
      assert.deepEqual([c.amount_wei, c.chain_id, c.token_contract, c.recipient, c.route_pricing_version], [PRICE.toString(), st.dev.chainId, st.usdc, MERCHANT_WALLET, 1]);
      assert.ok(c.expiry > Math.floor(st.s.clock.now() / 1000));
      const h = parseChallengeParams(r.headers.get('www-authenticate')!);
      assert.deepEqual([h.id, h.method, h.intent, h.realm], [c.challenge_id, 'evm', 'charge', '127.0.0.1:8402']);
      assert.equal(new Date(h.expires!).getTime() / 1000, c.expiry);
      const req = JSON.parse(Buffer.from(h.request!, 'base64url').toString());
      assert.deepEqual(req, { amount: PRICE.toString(), currency: st.usdc, recipient: MERCHANT_WALLET, methodDetails: { chainId: st.dev.chainId, credentialTypes: ['hash'], decimals: 6 } });
    });

    it('challenge refusals: unknown merchant 404, unpriced route 404 route_not_priced, request not extending the route 400', async () => {
      const unknown = await st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: 'mch_nobody', route_canonical: ROUTE, request_canonical: ROUTE, payer_addr: payer } });
      assert.deepEqual([unknown.status, unknown.body.code], [404, 'merchant_not_found']);
      const unpriced = await st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: 'GET:api:other', request_canonical: 'GET:api:other', payer_addr: payer } });
      assert.deepEqual([unpriced.status, unpriced.body.code], [404, 'route_not_priced']);
      const bad = await challenge(st, payer, 'GET:api:database');
      assert.deepEqual([bad.status, bad.body.code, bad.body.param], [400, 'invalid_request', 'request_canonical']);
    });

    it('pays: 202 pending_finality with Retry-After, then 200 with a receipt the SDK verifies; repeats return the same receipt', async () => {
      const c = (await challenge(st, payer, `${ROUTE}:q1`)).body;
      const tx = await pay(st, 0, c.recipient);
      const body = { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac };
      const pending = await verify(st, body);
      assert.equal(pending.status, 202, pending.text);
      assert.deepEqual(pending.body, { status: 'pending_finality', challenge_id: c.challenge_id, tx_hash: tx });
      assert.equal(pending.headers.get('retry-after'), '1');
      await finalize(st);
      const done = await verify(st, body);
      assert.equal(done.status, 200, done.text);
      const r = done.body;
      assert.deepEqual(
        [r.status, r.challenge_id, r.merchant_id, r.route_canonical, r.request_canonical, r.chain_id, r.tx_hash, r.amount_wei, r.payer, r.recipient, r.finality],
        ['paid', c.challenge_id, st.m.merchantId, ROUTE, `${ROUTE}:q1`, st.dev.chainId, tx, PRICE.toString(), payer, MERCHANT_WALLET, FINALITY],
      );
      const jwks = (await st.s.request('GET', '/.well-known/jwks.json')).body;
      const v = verifyMppReceipt(r.receipt, jwks);
      assert.ok(v.ok, JSON.stringify(v));
      assert.equal(v.claims.log_index, r.log_index);
      // A receipt with one claim changed does not verify.
      const [h, , sig] = r.receipt.split('.');
      const forged = Buffer.from(JSON.stringify({ ...v.claims, amount_wei: '999999999' })).toString('base64url');
      assert.deepEqual(verifyMppReceipt(`${h}.${forged}.${sig}`, jwks), { ok: false, reason: 'bad_signature' });
      // Payment-Receipt carries GOAT's three-segment receipt of the same payment (mpp-goat-wire.test.ts checks it in full).
      const [payload, , alg] = done.headers.get('payment-receipt')!.split('.');
      const header = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      assert.deepEqual([alg, header.challenge_id, header.tx_hash, header.log_index], ['ed25519', c.challenge_id, tx, r.log_index]);
      const again = await verify(st, body);
      assert.equal(again.status, 200);
      assert.equal(again.body.receipt, r.receipt);
      // The merchant sees the payment in its own list.
      const list = await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments');
      assert.equal(list.status, 200, list.text);
      assert.ok(list.body.data.some((p: any) => p.challenge_id === c.challenge_id && p.receipt === r.receipt));
      // Paging by `before`: a time JavaScript's Date accepts but the database does not is a 400, not a 500.
      for (const before of ['+275760-09-13T00:00:00Z', '0000-01-01T00:00:00Z', 'yesterday']) {
        const bad = await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments', { query: { before } });
        assert.equal(bad.status, 400, `${before}: ${bad.text}`);
        assert.equal(bad.body.param, 'before');
      }
      const older = await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments', { query: { before: '2000-01-01T00:00:00Z' } });
      assert.equal(older.status, 200, older.text);
      assert.deepEqual(older.body.data, []);
    });

    it('202 pending_inclusion while the transaction is not mined', async () => {
      const c = (await challenge(st, payer, `${ROUTE}:q2`)).body;
      await setAutomine(st.dev.rpcUrl, false);
      try {
        const tx = await pay(st, 0, c.recipient, PRICE, false);
        const r = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
        assert.equal(r.status, 202, r.text);
        assert.equal(r.body.status, 'pending_inclusion');
        assert.equal(r.headers.get('retry-after'), '1');
      } finally {
        await setAutomine(st.dev.rpcUrl, true);
        await mine(st.dev.rpcUrl, 1);
      }
    });

    it('a transaction paying one challenge is refused for another: 409 tx_already_claimed', async () => {
      const a = (await challenge(st, payer, `${ROUTE}:r1`)).body;
      const b = (await challenge(st, payer, `${ROUTE}:r2`)).body;
      const tx = await pay(st, 0, a.recipient);
      await finalize(st);
      assert.equal((await verify(st, { challenge_id: a.challenge_id, tx_hash: tx, payer_addr: payer, mac: a.mac })).status, 200);
      const r = await verify(st, { challenge_id: b.challenge_id, tx_hash: tx, payer_addr: payer, mac: b.mac });
      assert.deepEqual([r.status, r.body.code], [409, 'tx_already_claimed']);
      // A paid challenge presented with another transaction: 401 challenge_already_consumed.
      const tx2 = await pay(st, 0, a.recipient);
      await finalize(st);
      const c = await verify(st, { challenge_id: a.challenge_id, tx_hash: tx2, payer_addr: payer, mac: a.mac });
      assert.deepEqual([c.status, c.body.code], [401, 'challenge_already_consumed']);
    });

    it('refuses wrong payer, wrong MAC, forged id, unknown id with their codes', async () => {
      const c = (await challenge(st, payer, `${ROUTE}:s1`)).body;
      const tx = await pay(st, 0, c.recipient);
      await finalize(st);
      const other = st.dev.payers[1]!.address;
      const base = { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac };
      const cases: [Record<string, string>, number, string][] = [
        [{ payer_addr: other }, 401, 'payer_mismatch'],
        [{ mac: c.mac.slice(0, -2) + (c.mac.endsWith('AA') ? 'BB' : 'AA') }, 401, 'invalid_mac'],
        [{ challenge_id: c.challenge_id.slice(0, -2) + (c.challenge_id.endsWith('AA') ? 'BB' : 'AA') }, 401, 'invalid_mac'],
        [{ challenge_id: 'ch_short' }, 401, 'invalid_mac'],
      ];
      for (const [change, status, code] of cases) {
        const r = await verify(st, { ...base, ...change });
        assert.deepEqual([r.status, r.body.code], [status, code], JSON.stringify(change));
      }
      // None of them consumed the challenge.
      assert.equal((await verify(st, base)).status, 200);
    });

    it('refuses under-payment, a transfer to someone else, and a transfer mined before the challenge: 400 transfer_not_found', async () => {
      const c = (await challenge(st, payer, `${ROUTE}:t1`)).body;
      const under = await pay(st, 0, c.recipient, PRICE - 1n);
      const elsewhere = await pay(st, 0, st.dev.payers[2]!.address);
      await finalize(st);
      for (const tx of [under, elsewhere]) {
        const r = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
        assert.deepEqual([r.status, r.body.code, r.body.param], [400, 'transfer_not_found', 'tx_hash']);
      }
      const early = await pay(st, 0, c.recipient);
      await finalize(st);
      const saved = st.s.clock.ms;
      // The challenge is issued longer after the transfer was mined than a chain's clock may trail
      // the gateway's (CHAIN_CLOCK_SKEW_MS): refused.
      st.s.clock.ms = Date.now() + CHAIN_CLOCK_SKEW_MS + 10_000;
      try {
        const late = (await challenge(st, payer, `${ROUTE}:t2`)).body;
        const r = await verify(st, { challenge_id: late.challenge_id, tx_hash: early, payer_addr: payer, mac: late.mac });
        assert.deepEqual([r.status, r.body.code], [400, 'transfer_not_found']);
        // GOAT's wire on /mpp/v1: the code in `error`, the explanation in `detail`.
        assert.match(r.body.detail, /before the challenge/);
        // Within the skew (a block stamped a few seconds before the challenge, as a chain whose clock
        // trails ours stamps a transfer sent after it): the same transfer pays, once.
        st.s.clock.ms = Date.now() + 5_000;
        const skewed = (await challenge(st, payer, `${ROUTE}:t3`)).body;
        const ok = await verify(st, { challenge_id: skewed.challenge_id, tx_hash: early, payer_addr: payer, mac: skewed.mac });
        assert.equal(ok.status, 200, ok.text);
      } finally {
        st.s.clock.ms = saved;
      }
    });

    it('refuses an expired challenge: 401 challenge_expired', async () => {
      const c = (await challenge(st, payer, `${ROUTE}:u1`)).body;
      const tx = await pay(st, 0, c.recipient);
      await finalize(st);
      const saved = st.s.clock.ms;
      st.s.clock.ms = (c.expiry + 601) * 1000;
      try {
        const r = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
        assert.deepEqual([r.status, r.body.code], [401, 'challenge_expired']);
      } finally {
        st.s.clock.ms = saved;
      }
    });

    it('50 concurrent verifies of one transaction for 50 challenges: exactly one receipt, 49 × 409', async () => {
      const cs = [];
      for (let i = 0; i < 50; i++) cs.push((await challenge(st, payer, `${ROUTE}:c${i}`)).body);
      const tx = await pay(st, 0, cs[0].recipient);
      await finalize(st);
      const rs = await Promise.all(cs.map((c) => verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac })));
      const by = (n: number) => rs.filter((r) => r.status === n).length;
      assert.deepEqual([by(200), by(409)], [1, 49], JSON.stringify(rs.filter((r) => r.status !== 200 && r.status !== 409).map((r) => r.text)));
      const { rows } = await st.s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transfer_claims WHERE purpose = 'mpp_challenge' AND tx_ref = $1`, [tx]);
      assert.equal(rows[0]!.n, 1);
    });

    it('20 concurrent verifies of one challenge: all 200 with the same receipt', async () => {
      const c = (await challenge(st, payer, `${ROUTE}:d1`)).body;
      const tx = await pay(st, 0, c.recipient);
      await finalize(st);
      const rs = await Promise.all(Array.from({ length: 20 }, () => verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac })));
      assert.deepEqual([...new Set(rs.map((r) => r.status))], [200]);
      assert.equal(new Set(rs.map((r) => r.body.receipt)).size, 1);
    });
  });
}
