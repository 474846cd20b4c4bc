import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, rpcRequest, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { pendingRefundPayees } from '../../src/chain/evm/refunds.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, pay, payerAddress, startTestChain } from './watcher-fixtures.ts';

/** anvil's well-known account 9 (its default mnemonic), the test merchants' wallet (MERCHANT_WALLET): the merchant sends its refunds with it. */
const MERCHANT_ACCOUNT = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 9 });
const MERCHANT_KEY = `0x${Buffer.from(MERCHANT_ACCOUNT.getHdKey().privateKey!).toString('hex')}` as Hex;

/**
 * DIRECT refunds on a real anvil chain with the running watcher (docs/refunds.md): the merchant
 * records a refund, sends it from the wallet that was paid, and the watcher links the transfer to
 * the refund, claims it (never a payment, even when it has the exact terms of another merchant's
 * live order), and at depth marks it succeeded with `order.refunded` once. Limits: over the
 * remainder refused with nothing changed, concurrent requests never over-refund, unpaid orders refused.
 */
for (const backend of backends()) {
  describe(`refunds: DIRECT orders on anvil (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    before(async () => {
      assert.equal(MERCHANT_ACCOUNT.address.toLowerCase(), MERCHANT_WALLET);
      dev = await startTestChain();
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { confirmations: 2, finalityConfirmations: 3, pollIntervalMs: 50 })] });
      m = await setupMerchant(s);
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    const usdc = () => dev.tokens.find((t) => t.symbol === 'USDC')!.address as Hex;
    const create = async (who: Creds, from: string, amount: string) => {
      const r = await s.signed(who, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, from_address: from, amount_wei: amount, token_symbol: 'USDC' }) });
      assert.equal(r.status, 402, r.text);
      return r.body.order_id as string;
    };
    const record = async (id: string, who = m) => (await s.signed(who, 'GET', `/api/v1/orders/${id}`)).body;
    async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
      const end = Date.now() + timeoutMs;
      let last: T | undefined;
      while (Date.now() < end) {
        last = await read();
        if (ok(last)) return last;
        await mine(dev.rpcUrl, 1);
        await new Promise((r) => setTimeout(r, 60));
      }
      throw new Error(`${what} not reached: ${JSON.stringify(last)}`);
    }
    const refundRows = async (orderId: string) =>
      (await s.db.query<{ id: string; amount: string; status: string; tx_hash: string | null }>('SELECT id, amount::text AS amount, status, tx_hash FROM refunds WHERE order_id = $1 ORDER BY created_at, id', [orderId])).rows;
    const sendRefund = async (to: Hex, amount: bigint) => {
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: MERCHANT_KEY, token: usdc(), to, amount });
      await until(
        'refund mined',
        () => rpcRequest<unknown>(dev.rpcUrl, 'eth_getTransactionReceipt', [hash]),
        (x) => !!x,
      );
      return hash;
    };

    it('an unpaid order is refused; over the paid amount refused with nothing recorded; concurrent requests never over-refund', async () => {
      const unpaid = await create(m, payerAddress(dev, 1), '700000');
      const r0 = await s.signed(m, 'POST', `/api/v1/orders/${unpaid}/refunds`, { body: {} });
      assert.deepEqual([r0.status, r0.body.code], [409, 'order_not_refundable']);

      const id = await create(m, payerAddress(dev, 1), '1000000');
      await pay(dev, 1, MERCHANT_WALLET as Hex, 1_000_000n);
      await until(
        'paid',
        () => record(id),
        (o) => o.status === 'INVOICED' || o.status === 'PAYMENT_CONFIRMED',
      );
      const over = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '1.000001' } });
      assert.deepEqual([over.status, over.body.code, over.body.param], [400, 'refund_exceeds_payment', 'amount']);
      const bad = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '0.0000001' } });
      assert.deepEqual([bad.status, bad.body.code], [400, 'invalid_amount']);
      assert.deepEqual(await refundRows(id), []);

      const answers = await Promise.all(Array.from({ length: 5 }, () => s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '0.3' } })));
      assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 200, 400, 400], answers.map((r) => r.text).join('\n'));
      assert.ok(answers.filter((r) => r.status === 400).every((r) => r.body.code === 'refund_exceeds_payment'));
      const rows = await refundRows(id);
      assert.deepEqual(
        rows.map((r) => [r.amount, r.status]),
        [
          ['300000', 'pending'],
          ['300000', 'pending'],
          ['300000', 'pending'],
        ],
      );
      const rest = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: {} });
      assert.equal(rest.body.amount_base_units, '100000', 'without amount: all that remains');
      const again = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: {} });
      assert.deepEqual([again.status, again.body.code], [409, 'order_not_refundable']);
    });

    it('the refund transfer is linked and claimed, never credited as a payment, and order.refunded is written once', async () => {
      const payer = payerAddress(dev, 2);
      const id = await create(m, payer, '2000000');
      await pay(dev, 2, MERCHANT_WALLET as Hex, 2_000_000n);
      await until(
        'invoiced',
        () => record(id),
        (o) => o.status === 'INVOICED',
      );

      // A trap: another merchant whose wallet is this payer has a live order with exactly the
      // refund's terms (payer = our merchant wallet, amount 0.75). The refund transfer must not pay it.
      const trap = await s.createMerchant({ name: 'Trap', topUp: '10.00' });
      const w = await s.admin('POST', `/admin/v1/merchants/${trap.merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: 'USDC', address: payer });
      assert.equal(w.status, 201, w.text);
      const trapOrder = await create(trap, MERCHANT_WALLET, '750000');

      const rf = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '0.75', reason: 'one item returned' } });
      assert.equal(rf.status, 200, rf.text);
      assert.deepEqual(
        [rf.body.rail, rf.body.status, rf.body.amount, rf.body.amount_base_units, rf.body.currency, rf.body.from_address, rf.body.to_address, rf.body.token_contract, rf.body.chain_id],
        ['direct', 'pending', '0.75', '750000', 'USDC', MERCHANT_WALLET, payer, usdc().toLowerCase(), dev.chainId],
      );
      // The scan asks for a refund only about transfers to these payees (scan.ts).
      assert.ok((await pendingRefundPayees(s.db, dev.chainId)).has(payer.toLowerCase()), 'the pending refund is waited for');
      // a transfer of another amount is not the refund
      await sendRefund(payer as Hex, 10_000n);
      const hash = await sendRefund(payer as Hex, 750_000n);
      const done = await until(
        'refund succeeded',
        async () => (await s.signed(m, 'GET', `/api/v1/orders/${id}/refunds`)).body.refunds[0],
        (r: any) => r.status === 'succeeded',
      );
      assert.deepEqual([done.tx_hash, done.refunded_amount, done.order_status], [hash, '0.75', 'INVOICED']);
      assert.equal((await record(id)).refunded_amount, '0.75');
      assert.ok(!(await pendingRefundPayees(s.db, dev.chainId)).has(payer.toLowerCase()), 'a linked refund waits for no transfer');

      const { rows: t } = await s.db.query<{ id: string; match_status: string; order_id: string | null }>('SELECT id, match_status, order_id FROM chain_transfers WHERE tx_hash = $1', [hash]);
      assert.deepEqual(
        t.map((x) => [x.match_status, x.order_id]),
        [['claimed', null]],
      );
      const { rows: claims } = await s.db.query<{ purpose: string; purpose_id: string }>('SELECT purpose, purpose_id FROM transfer_claims WHERE tx_ref = $1', [hash]);
      assert.deepEqual(
        claims.map((c) => [c.purpose, c.purpose_id]),
        [['refund', rf.body.refund_id]],
      );
      const trapRec = await record(trapOrder, trap);
      assert.equal(trapRec.status, 'CHECKOUT_VERIFIED', 'the refund paid no order');
      assert.equal(trapRec.tx_hash, undefined);
      const { rows: paidBy } = await s.db.query('SELECT id FROM orders WHERE transfer_id = $1', [t[0]!.id]);
      assert.equal(paidBy.length, 0);

      await mine(dev.rpcUrl, 3);
      await new Promise((r) => setTimeout(r, 300));
      const { rows: ev } = await s.db.query<{ payload: any }>(`SELECT payload FROM webhook_events WHERE order_id = $1 AND event = 'order.refunded'`, [id]);
      assert.equal(ev.length, 1, 'order.refunded once');
      const p = typeof ev[0]!.payload === 'string' ? JSON.parse(ev[0]!.payload) : ev[0]!.payload;
      assert.deepEqual([p.refund_id, p.rail, p.tx_hash, p.status], [rf.body.refund_id, 'direct', hash, 'succeeded']);
      // The 0.01 decoy (no refund of that amount) is an ordinary transfer: attribution records it
      // against the trap order as an under-payment; the refund transfer appears nowhere there.
      const trapAfter = await record(trapOrder, trap);
      assert.equal(trapAfter.status, 'CHECKOUT_VERIFIED');
      assert.deepEqual(
        (trapAfter.observed_transfers ?? []).map((x: any) => [x.amount_wei, x.kind]),
        [['10000', 'underpaid']],
      );
      const { rows: trapEv } = await s.db.query<{ event: string }>('SELECT event FROM webhook_events WHERE order_id = $1', [trapOrder]);
      assert.deepEqual(
        trapEv.map((e) => e.event),
        ['order.underpaid'],
      );
    });
  });
}
