import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine } from '@tollgate/devchain';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { startMppStack, type MppStack } from './mpp-fixtures.ts';
import { randomAddress } from './watcher-fixtures.ts';
import { x402Body } from './x402-fixtures.ts';

/**
 * x402 settlements as merchants see them: a settlement the facilitator performed to a merchant's
 * wallet (real EIP-3009 signature, real executor transaction on anvil) is listed under
 * GET /api/v1/x402/settlements for that merchant only, and once confirmed the worker's reconcile
 * emits `x402.settlement.confirmed` exactly once (a second pass emits nothing). A settlement to an
 * address that is no merchant's, or of 0, is refused: nothing recorded, nothing announced.
 */
for (const backend of backends()) {
  describe(`x402 settlements visible to the merchant (${backend})`, () => {
    let st: MppStack;
    before(async () => {
      st = await startMppStack(backend, { settle: true });
    });
    after(() => st?.close());

    it('lists the settlement for the pay-to merchant only, then announces it once when confirmed', async () => {
      const other = await st.s.createMerchant({ name: 'Other' });
      const w = await st.s.admin('POST', `/admin/v1/merchants/${other.merchantId}/wallets`, { chain_id: st.dev.chainId, token_symbol: 'USDC', address: randomAddress() });
      assert.equal(w.status, 201, w.text);

      const body = await x402Body({ chainId: st.dev.chainId, token: st.usdc, payTo: MERCHANT_WALLET, nowSeconds: Math.floor(Date.now() / 1000), payerKey: st.dev.payers[4]!.privateKey, amount: 25_000n });
      const settled = await st.s.request('POST', '/x402/v2/settle', { body });
      assert.equal(settled.status, 200, settled.text);
      assert.equal(settled.body.success, true, settled.text);
      // Not settled at all: someone else's address (no merchant's wallet here), or 0 to the merchant's
      // wallet (it announced x402.settlement.confirmed for a transfer of nothing): nothing recorded.
      const stranger = await st.s.request('POST', '/x402/v2/settle', { body: await x402Body({ chainId: st.dev.chainId, token: st.usdc, payTo: randomAddress(), nowSeconds: Math.floor(Date.now() / 1000), payerKey: st.dev.payers[4]!.privateKey }) });
      assert.deepEqual([stranger.status, stranger.body.success, stranger.body.errorReason, stranger.body.transaction], [200, false, 'pay_to_not_served', ''], stranger.text);
      const zero = await st.s.request('POST', '/x402/v2/settle', { body: await x402Body({ chainId: st.dev.chainId, token: st.usdc, payTo: MERCHANT_WALLET, nowSeconds: Math.floor(Date.now() / 1000), payerKey: st.dev.payers[4]!.privateKey, amount: 0n }) });
      assert.deepEqual([zero.status, zero.body.success, zero.body.errorReason, zero.body.transaction], [200, false, 'invalid_exact_evm_zero_value', ''], zero.text);
      assert.equal((await st.s.db.query('SELECT 1 FROM x402_authorizations')).rows.length, 1, 'only the settlement that moved money is recorded');

      const list = await st.s.signed(st.m, 'GET', '/api/v1/x402/settlements');
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.data.length, 1, list.text);
      const s = list.body.data[0];
      assert.deepEqual(
        [s.network, s.chain_id, s.token_contract, s.token_symbol, s.payer, s.pay_to, s.amount_wei, s.tx_hash],
        [`eip155:${st.dev.chainId}`, st.dev.chainId, st.usdc, 'USDC', st.dev.payers[4]!.address.toLowerCase(), MERCHANT_WALLET, '25000', settled.body.transaction],
      );
      assert.match(s.settlement_id, /^x4a_[0-9a-f]{32}$/);
      assert.ok(['pending', 'confirmed'].includes(s.status), s.status);
      const none = await st.s.signed(other, 'GET', '/api/v1/x402/settlements');
      assert.deepEqual(none.body.data, []);
      const bad = await st.s.signed(st.m, 'GET', '/api/v1/x402/settlements', { query: { before: 'yesterday' } });
      assert.deepEqual([bad.status, bad.body.code, bad.body.param], [400, 'invalid_request', 'before']);

      // The worker's pass: confirm at depth, then announce.
      await mine(st.dev.rpcUrl, 3);
      await st.s.tg.deps.x402.reconcile();
      const events = async () => (await st.s.db.query<{ merchant_id: string; payload: any }>(`SELECT merchant_id, payload FROM webhook_events WHERE event = 'x402.settlement.confirmed' ORDER BY created_at`)).rows;
      const ev = await events();
      assert.equal(ev.length, 1, JSON.stringify(ev));
      assert.equal(ev[0]!.merchant_id, st.m.merchantId);
      const payload = typeof ev[0]!.payload === 'string' ? JSON.parse(ev[0]!.payload) : ev[0]!.payload;
      assert.deepEqual([payload.settlement_id, payload.status, payload.tx_hash], [s.settlement_id, 'confirmed', settled.body.transaction]);
      await st.s.tg.deps.x402.reconcile();
      assert.equal((await events()).length, 1);
      const after = await st.s.signed(st.m, 'GET', '/api/v1/x402/settlements');
      assert.equal(after.body.data[0].status, 'confirmed');
    });
  });
}
