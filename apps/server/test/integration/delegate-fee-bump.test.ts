// DELEGATE end to end with fee bumping: the watcher and the settlement worker running, a final
// payment whose settlement transaction the chain does not mine (automine off) is replaced after
// `fee_bump.after_seconds` by one with the same nonce and higher fees; once a block is mined the
// order is INVOICED exactly once, naming the mined replacement, the merchant paid once, and
// /metrics counts the bump. Executor-level cases (cap, reorg): settlement-fee-bump.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, setAutomine, transferToken } from '@tollgate/devchain';
import { createPublicClient, erc20Abi, http, parseTransaction, type Hex } from 'viem';
import { backends } from '../helpers/db.ts';
import { sample } from '../helpers/metrics.ts';
import { buildOrderBody, MERCHANT_WALLET } from '../helpers/orders.ts';
import type { Creds } from '../helpers/server.ts';
import { setupDelegateMerchant, startDelegateStack, type DelegateStack } from './delegate-fixtures.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

for (const backend of backends()) {
  describe(`DELEGATE settlement with fee bumping (${backend})`, () => {
    let st: DelegateStack;
    let m: Creds;
    before(async () => {
      st = await startDelegateStack(backend, { chain: { feeBump: { afterMs: 1_000, bumpPercent: 15, maxFeePerGas: 10n ** 12n } } });
      m = await setupDelegateMerchant(st, { callback: false });
    });
    after(async () => {
      await setAutomine(st.dev.rpcUrl, true).catch(() => undefined);
      await st?.close();
    });

    const client = () => createPublicClient({ transport: http(st.dev.rpcUrl) });
    const usdc = () => st.dev.tokens.find((t) => t.symbol === 'USDC')!.address as Hex;
    const balance = (who: Hex) => client().readContract({ address: usdc(), abi: erc20Abi, functionName: 'balanceOf', args: [who] });
    const rows = async (orderId: string) =>
      (await st.s.db.query<{ attempt: number; status: string; tx_hash: Hex; raw_tx: Hex }>("SELECT attempt, status, tx_hash, raw_tx FROM settlements WHERE order_id = $1 AND kind = 'settle' ORDER BY attempt", [orderId])).rows;

    it('a stuck settlement is replaced; the mined replacement invoices the order once', async () => {
      const payer = st.dev.payers[0]!;
      const r = await st.s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: st.chain.chainId, token_symbol: 'USDC', from_address: payer.address, amount_wei: '1234567' }) });
      assert.equal(r.status, 402, r.text);
      const orderId = r.body.order_id as string;
      const merchantBefore = await balance(MERCHANT_WALLET as Hex);
      const nonceBefore = await client().getTransactionCount({ address: st.setup.signer.executorAddress });
      await client().waitForTransactionReceipt({
        hash: await transferToken({ rpcUrl: st.dev.rpcUrl, chainId: st.chain.chainId, privateKey: payer.privateKey, token: usdc(), to: st.chain.settlementContract!, amount: 1_234_567n }),
      });
      // From here the chain mines only when the test says so: the settlement waits in the mempool.
      await setAutomine(st.dev.rpcUrl, false);
      await mine(st.dev.rpcUrl, 1); // the payment is final (2 blocks)
      const first = await waitFor('the settlement sent', async () => (await rows(orderId)).find((x) => x.attempt === 0 && x.status === 'sent'));
      const bumped = await waitFor('the replacement', async () => (await rows(orderId)).find((x) => x.attempt === 1 && x.status === 'sent'));
      const [a, b] = [parseTransaction(first.raw_tx), parseTransaction(bumped.raw_tx)];
      assert.equal(b.nonce, a.nonce);
      assert.ok(b.maxFeePerGas! * 100n >= a.maxFeePerGas! * 115n);
      const scrape = (await st.s.request('GET', '/metrics')).text;
      assert.ok(sample(scrape, 'tollgate_settlement_fee_bumps_total', { chain_id: String(st.chain.chainId), kind: 'settle', outcome: 'bumped' })! >= 1, scrape);
      assert.equal(sample(scrape, 'tollgate_settlement_backlog', { chain_id: String(st.chain.chainId) }), 1, 'one settlement in flight, whatever its attempts');
      assert.equal(sample(scrape, 'tollgate_settlement_waiting', { chain_id: String(st.chain.chainId), reason: 'fee_bumped' }), 1, 'waiting because it was fee-bumped');

      // Mine: the newest attempt the pool holds is the one mined; then finality.
      let status = '';
      let rec: any;
      for (let i = 0; i < 100 && status !== 'INVOICED'; i++) {
        await mine(st.dev.rpcUrl, 1);
        await sleep(100);
        rec = (await st.s.signed(m, 'GET', `/api/v1/orders/${orderId}`)).body;
        status = rec.status;
      }
      assert.equal(status, 'INVOICED', JSON.stringify(rec));
      const after = await rows(orderId);
      const confirmed = after.filter((x) => x.status === 'confirmed');
      assert.equal(confirmed.length, 1, JSON.stringify(after.map((x) => [x.attempt, x.status])));
      assert.ok(confirmed[0]!.attempt >= 1, 'a replacement was mined');
      assert.ok(after.every((x) => x.status === 'confirmed' || x.status === 'replaced'));
      assert.equal(rec.settlement_tx_hash, confirmed[0]!.tx_hash, 'the order names the mined transaction');
      assert.equal((await client().getTransactionReceipt({ hash: confirmed[0]!.tx_hash })).status, 'success');
      await assert.rejects(client().getTransactionReceipt({ hash: first.tx_hash }), 'the original was never mined');
      const invoiced = await st.s.db.query<{ n: string }>("SELECT count(*) AS n FROM order_transitions WHERE order_id = $1 AND to_status = 'INVOICED'", [orderId]);
      assert.equal(Number(invoiced.rows[0]!.n), 1, 'INVOICED exactly once');
      assert.equal(await balance(MERCHANT_WALLET as Hex), merchantBefore + 1_234_567n, 'the merchant was paid once');
      assert.equal(await client().getTransactionCount({ address: st.setup.signer.executorAddress }), nonceBefore + 1, 'one executor transaction mined');
    });
  });
}
