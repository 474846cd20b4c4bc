// DELEGATE end to end on a real anvil chain, with the watcher and the settlement worker running:
// plain payout for both flows (transfer to the pool; approve-and-pull), a callback with signed
// calldata (adapter state changed on chain, INVOICED with settlement_tx_hash at finality), a
// reverting callback (FAILED with failure_reason and order.failed, then refunded to the payer),
// and the contract refusing a second settlement of the same order.
import assert from 'node:assert/strict';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import { after, before, describe, it } from 'node:test';
import { ExampleCreditAdapterArtifact, NO_CALLBACK_DATA, orderIdToBytes32, toSignableTypedData, TollgateSettlementArtifact } from '@tollgate/contracts';
import { mine, transferToken } from '@tollgate/devchain';
import { createPublicClient, createWalletClient, encodeAbiParameters, erc20Abi, http, pad, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { signCalldataSignRequest, TollgateClient } from '../../../../packages/sdk/src/index.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET } from '../helpers/orders.ts';
import type { Creds } from '../helpers/server.ts';
import { setupDelegateMerchant, startDelegateStack, type DelegateStack } from './delegate-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const ACCOUNT = pad('0xbeef', { size: 32 });
const CALLDATA = encodeAbiParameters([{ type: 'bytes32' }], [ACCOUNT]);

for (const backend of backends()) {
  describe(`DELEGATE settlement end to end (${backend})`, () => {
    let st: DelegateStack;
    let withCb: Creds;
    let plain: Creds;
    let seq = 0;
    before(async () => {
      st = await startDelegateStack(backend);
      withCb = await setupDelegateMerchant(st);
      plain = await setupDelegateMerchant(st, { callback: false });
    });
    after(async () => {
      await st?.close();
    });

    const client = () => createPublicClient({ transport: http(st.dev.rpcUrl) });
    const token = (symbol: string) => st.dev.tokens.find((t) => t.symbol === symbol)!.address as Hex;
    const balance = (symbol: string, who: Hex) => client().readContract({ address: token(symbol), abi: erc20Abi, functionName: 'balanceOf', args: [who] });
    const payerN = (i: number) => st.dev.payers[i]!;

    async function create(m: Creds, over: Record<string, unknown>) {
      const r = await st.s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: st.chain.chainId, amount_wei: String(1_000_000 + ++seq), ...over }) });
      assert.equal(r.status, 402, r.text);
      return r.body;
    }
    /** Polls the status record, mining a block per round so depth grows. */
    function until(m: Creds, orderId: string, want: string, timeoutMs = 30_000) {
      return waitFor(
        `order ${orderId} ${want}`,
        async () => {
          const last = (await st.s.signed(m, 'GET', `/api/v1/orders/${orderId}`)).body;
          if (last.status !== want) await mine(st.dev.rpcUrl, 1);
          return last;
        },
        (last) => last.status === want,
        { timeoutMs, everyMs: 100 },
      );
    }
    const pay = (i: number, symbol: string, amount: string) => transferToken({ rpcUrl: st.dev.rpcUrl, chainId: st.chain.chainId, privateKey: payerN(i).privateKey, token: token(symbol), to: st.chain.settlementContract!, amount: BigInt(amount) });

    it('ERC20_3009 token, plain transfer, no callback: settled to the merchant wallet, INVOICED at finality', async () => {
      const before = await balance('USDC', MERCHANT_WALLET as Hex);
      const o = await create(plain, { token_symbol: 'USDC', from_address: payerN(0).address });
      assert.equal(o.flow, 'ERC20_3009');
      await pay(0, 'USDC', o.accepts[0].amount);
      const rec = await until(plain, o.order_id, 'INVOICED');
      assert.match(rec.settlement_tx_hash, /^0x[0-9a-f]{64}$/);
      assert.ok(rec.settled_at && rec.invoiced_at);
      assert.equal(rec.callback_status, undefined, 'no callback registered');
      assert.equal(await balance('USDC', MERCHANT_WALLET as Hex), before + BigInt(o.accepts[0].amount));
      const receipt = await client().getTransactionReceipt({ hash: rec.settlement_tx_hash });
      assert.equal(receipt.status, 'success');
      assert.equal(receipt.to?.toLowerCase(), st.chain.settlementContract);
    });

    it('ERC20_APPROVE_XFER token: approve, the gateway pulls and settles in one transaction', async () => {
      const before = await balance('USDT', MERCHANT_WALLET as Hex);
      const o = await create(plain, { token_symbol: 'USDT', from_address: payerN(1).address });
      assert.equal(o.flow, 'ERC20_APPROVE_XFER');
      const wallet = createWalletClient({ account: privateKeyToAccount(payerN(1).privateKey), transport: http(st.dev.rpcUrl) });
      await wallet.writeContract({ chain: null, address: token('USDT'), abi: erc20Abi, functionName: 'approve', args: [st.chain.settlementContract!, BigInt(o.accepts[0].amount)] });
      const rec = await until(plain, o.order_id, 'INVOICED');
      assert.equal(await balance('USDT', MERCHANT_WALLET as Hex), before + BigInt(o.accepts[0].amount));
      const receipt = await client().getTransactionReceipt({ hash: rec.settlement_tx_hash });
      assert.equal(receipt.status, 'success');
    });

    it('callback with signed calldata: adapter credited on chain, INVOICED with callback_status succeeded; a second settle reverts', async () => {
      const o = await create(withCb, { token_symbol: 'USDC', from_address: payerN(2).address, callback_calldata: CALLDATA });
      // The merchant SDK's path: sign with a viem account through the SDK helper, submit with the client.
      const sig = await signCalldataSignRequest(privateKeyToAccount(payerN(2).privateKey), o.calldata_sign_request);
      assert.equal(sig, await privateKeyToAccount(payerN(2).privateKey).signTypedData(toSignableTypedData(o.calldata_sign_request)));
      const sdk = new TollgateClient({ baseUrl: st.s.url, apiKey: withCb.apiKey, apiSecret: withCb.apiSecret });
      const s = await sdk.submitCalldataSignature(o.order_id, sig);
      assert.equal(s.status, 'ok');
      const adapter = st.setup.adapter!.address;
      const creditsBefore = await client().readContract({ address: adapter, abi: ExampleCreditAdapterArtifact.abi, functionName: 'credits', args: [ACCOUNT, token('USDC')] });
      await pay(2, 'USDC', o.accepts[0].amount);
      const rec = await until(withCb, o.order_id, 'INVOICED');
      assert.equal(rec.callback_status, 'succeeded');
      const credits = await client().readContract({ address: adapter, abi: ExampleCreditAdapterArtifact.abi, functionName: 'credits', args: [ACCOUNT, token('USDC')] });
      assert.equal(credits, creditsBefore + BigInt(o.accepts[0].amount));
      assert.equal(await client().readContract({ address: adapter, abi: ExampleCreditAdapterArtifact.abi, functionName: 'orderCredited', args: [orderIdToBytes32(o.order_id)] }), true);
      // The same order again, from the executor: the contract refuses it.
      await assert.rejects(
        client().simulateContract({
          address: st.chain.settlementContract!,
          abi: TollgateSettlementArtifact.abi,
          functionName: 'settle',
          args: [{ orderId: orderIdToBytes32(o.order_id), payer: payerN(2).address, token: token('USDC'), amount: 1n, payee: MERCHANT_WALLET as Hex, callback: false }, NO_CALLBACK_DATA],
          account: st.setup.signer.executorAddress,
        }),
        /OrderAlreadyProcessed/,
      );
    });

    it('a reverting callback: FAILED with failure_reason and order.failed; the operator refund lands on the payer', async () => {
      const bad = '0x1234' as Hex; // the example adapter wants exactly 32 bytes: MalformedCalldata
      const o = await create(withCb, { token_symbol: 'USDC', from_address: payerN(3).address, callback_calldata: bad });
      const sig = await privateKeyToAccount(payerN(3).privateKey).signTypedData(toSignableTypedData(o.calldata_sign_request));
      assert.equal((await st.s.signed(withCb, 'POST', `/api/v1/orders/${o.order_id}/calldata-signature`, { body: { signature: sig } })).status, 200);
      const start = await balance('USDC', payerN(3).address);
      await pay(3, 'USDC', o.accepts[0].amount);
      const rec = await until(withCb, o.order_id, 'FAILED');
      // The adapter's own custom error, decoded, not only the settlement contract's wrapper.
      assert.equal(rec.failure_reason, `callback failed: CallbackReverted: adapter ${st.setup.adapter!.address} reverted with MalformedCalldata()`);
      assert.equal(rec.callback_status, 'failed');
      const { rows } = await st.s.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_events WHERE order_id = $1 AND event = 'order.failed'`, [o.order_id]);
      assert.equal(Number(rows[0]!.n), 1);
      assert.equal(await balance('USDC', payerN(3).address), start - BigInt(o.accepts[0].amount), 'funds wait in the settlement contract');

      const r = await st.s.admin('POST', `/admin/v1/orders/${o.order_id}/refund`, {});
      assert.equal(r.status, 202, r.text);
      assert.match(r.body.refund_tx_hash, /^0x[0-9a-f]{64}$/);
      const again = await st.s.admin('POST', `/admin/v1/orders/${o.order_id}/refund`, {});
      assert.equal(again.body.refund_tx_hash, r.body.refund_tx_hash, 'a second refund call names the same transaction');
      const end = Date.now() + 20_000;
      while ((await balance('USDC', payerN(3).address)) !== start && Date.now() < end) {
        await mine(st.dev.rpcUrl, 1);
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(await balance('USDC', payerN(3).address), start, 'the payer has the whole amount back');
      const after = (await st.s.signed(withCb, 'GET', `/api/v1/orders/${o.order_id}`)).body;
      assert.equal(after.refund_tx_hash, r.body.refund_tx_hash);
      // The merchant portal shows the DELEGATE order as it is: callback, decoded failure, refund.
      const portal = new PortalClient(st.s);
      assert.equal((await portal.login('owner@delegate.example', await addPortalUser(st.s, withCb.merchantId, 'owner@delegate.example'))).status, 200);
      const d = await portal.call('GET', `/portal/api/orders/${o.order_id}`);
      assert.equal(d.status, 200, d.text);
      assert.equal(d.body.rail, 'crypto');
      assert.equal(d.body.card, undefined);
      assert.equal(d.body.order.callback_status, 'failed');
      assert.equal(d.body.order.failure_reason, rec.failure_reason);
      assert.equal(d.body.order.refund_tx_hash, r.body.refund_tx_hash);
      const row = (await portal.call('GET', '/portal/api/orders', undefined, { query: { q: o.order_id } })).body.orders[0];
      assert.deepEqual([row.rail, row.flow, row.callback_status, row.processor], ['crypto', o.flow, 'failed', undefined]);
      const invoicedRefund = await st.s.admin('POST', `/admin/v1/orders/ord_unknown/refund`, {});
      assert.equal(invoicedRefund.status, 404);
    });

    it('the merchant asks the refund of a FAILED order: whole amount only, once; the executor returns it and order.refunded is written once', async () => {
      const o = await create(withCb, { token_symbol: 'USDC', from_address: payerN(5).address, callback_calldata: '0x1234' });
      const sig = await privateKeyToAccount(payerN(5).privateKey).signTypedData(toSignableTypedData(o.calldata_sign_request));
      assert.equal((await st.s.signed(withCb, 'POST', `/api/v1/orders/${o.order_id}/calldata-signature`, { body: { signature: sig } })).status, 200);
      const start = await balance('USDC', payerN(5).address);
      await pay(5, 'USDC', o.accepts[0].amount);
      await until(withCb, o.order_id, 'FAILED');
      const partial = await st.s.signed(withCb, 'POST', `/api/v1/orders/${o.order_id}/refunds`, { body: { amount: '0.5' } });
      assert.deepEqual([partial.status, partial.body.code], [400, 'partial_refund_not_supported']);
      const other = await st.s.signed(plain, 'POST', `/api/v1/orders/${o.order_id}/refunds`, { body: {} });
      assert.equal(other.status, 404, 'another merchant cannot refund it');
      const [a, b] = await Promise.all([0, 1].map(() => st.s.signed(withCb, 'POST', `/api/v1/orders/${o.order_id}/refunds`, { body: { reason: 'adapter down' } })));
      const ok = [a!, b!].filter((r) => r.status === 200);
      assert.equal(ok.length, 1, `${a!.text}\n${b!.text}`);
      assert.deepEqual(
        [a!, b!].filter((r) => r.status !== 200).map((r) => [r.status, r.body.code]),
        [[409, 'order_not_refundable']],
      );
      const rf = ok[0]!.body;
      assert.deepEqual([rf.rail, rf.status, rf.requested_by, rf.amount_base_units, rf.to_address], ['delegate', 'pending', 'merchant', o.accepts[0].amount, payerN(5).address.toLowerCase()]);
      assert.match(rf.tx_hash, /^0x[0-9a-f]{64}$/);
      // the operator's call names the same transaction (its route stays idempotent)
      const op = await st.s.admin('POST', `/admin/v1/orders/${o.order_id}/refund`, {});
      assert.equal(op.body.refund_tx_hash, rf.tx_hash);
      const end = Date.now() + 30_000;
      let list: any;
      while (Date.now() < end) {
        list = (await st.s.signed(withCb, 'GET', `/api/v1/orders/${o.order_id}/refunds`)).body.refunds;
        if (list[0]?.status === 'succeeded') break;
        await mine(st.dev.rpcUrl, 1);
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(list.length, 1);
      assert.deepEqual([list[0].status, list[0].refund_id, list[0].order_status], ['succeeded', rf.refund_id, 'FAILED']);
      assert.equal(await balance('USDC', payerN(5).address), start, 'the payer has the whole amount back');
      await mine(st.dev.rpcUrl, 2);
      await new Promise((res) => setTimeout(res, 500));
      const { rows } = await st.s.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_events WHERE order_id = $1 AND event = 'order.refunded'`, [o.order_id]);
      assert.equal(Number(rows[0]!.n), 1);
      const again = await st.s.signed(withCb, 'POST', `/api/v1/orders/${o.order_id}/refunds`, { body: {} });
      assert.deepEqual([again.status, again.body.code], [409, 'order_not_refundable']);
    });

    it('an invoiced or DIRECT order is not refundable', async () => {
      const o = await create(plain, { token_symbol: 'USDC', from_address: payerN(4).address });
      await pay(4, 'USDC', o.accepts[0].amount);
      await until(plain, o.order_id, 'INVOICED');
      const r = await st.s.admin('POST', `/admin/v1/orders/${o.order_id}/refund`, {});
      assert.equal(r.status, 409);
      assert.equal(r.body.code, 'order_not_refundable');
    });
  });
}
