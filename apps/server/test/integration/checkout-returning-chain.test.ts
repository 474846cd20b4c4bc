import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { createSession, startCheckoutServer } from './checkout-fixtures.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Returning payers on a real anvil chain with the running watcher (orders/supersede.ts): the order
 * a new session superseded is not forgotten. A payment with its terms pays the live order while
 * there is one; a second one (the old tab's) is recorded `late` against the superseded order by
 * the attribution rule (closed beats paid: docs/attribution.md), where the merchant accepts it.
 */
for (const backend of backends()) {
  describe(`returning payers on anvil (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    before(async () => {
      dev = await startTestChain();
      s = await startCheckoutServer(backend, { chains: [chainConfigOf(dev, { confirmations: 2, finalityConfirmations: 4, pollIntervalMs: 50 })] });
      m = await setupMerchant(s);
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    const order = (id: string) => s.signed(m, 'GET', `/api/v1/orders/${id}`).then((r) => r.body);
    const payUsdc = (payer: number, to: string, amount: bigint) => transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: dev.payers[payer]!.privateKey, token: dev.tokens.find((t) => t.symbol === 'USDC')!.address, to: to as Hex, amount });

    it('checkout: the new order is paid; a second payment with the terms is late against the superseded order, which the merchant accepts', async () => {
      const payer = dev.payers[0]!.address;
      const session = async () => (await createSession(s, m, { price: '4.10', line_items_json: undefined })).checkout_id;
      const bind = (id: string) => s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payer } });
      const left = await session();
      const earlier = await bind(left);
      assert.equal(earlier.status, 200, earlier.text);
      const back = await session();
      const now = await bind(back);
      assert.equal(now.status, 200, now.text);
      assert.equal((await order(earlier.body.order_id)).status, 'EXPIRED');

      const paid = await payUsdc(0, now.body.pay_to_address, 4_100_000n);
      await mine(dev.rpcUrl, 1);
      const n = await waitFor(
        'new order paid',
        () => order(now.body.order_id),
        (o) => o.status === 'PAYMENT_CONFIRMED' || o.status === 'INVOICED',
      );
      assert.equal(n.tx_hash, paid);

      const late = await payUsdc(0, earlier.body.pay_to_address, 4_100_000n);
      await mine(dev.rpcUrl, 4);
      const o = await waitFor(
        'late recorded',
        () => order(earlier.body.order_id),
        (x) => x.observed_transfers?.length === 1,
      );
      assert.deepEqual([o.status, o.observed_transfers[0].kind, o.observed_transfers[0].tx_hash, o.needs_reconciliation], ['EXPIRED', 'late', late, true]);
      const events = (await s.db.query<{ event: string }>('SELECT event FROM webhook_events WHERE order_id = $1', [earlier.body.order_id])).rows.map((e) => e.event);
      assert.ok(events.includes('order.late_payment'), events.join(','));
      assert.equal((await order(now.body.order_id)).observed_transfers.length, 1, 'the new order keeps only its own payment');

      // Not lost: the merchant accepts it once final; the earlier session completes with it.
      const accepted = await waitFor(
        'accepted',
        () => s.signed(m, 'POST', `/api/v1/orders/${earlier.body.order_id}/accept-payment`),
        (r) => r.status !== 409 || r.body.code !== 'payment_not_final',
      );
      assert.deepEqual([accepted.status, accepted.body.status], [200, 'INVOICED'], accepted.text);
      const st = await waitFor(
        'left session completed',
        () => s.request('GET', `/checkout/v1/sessions/${left}/status`).then((r) => r.body),
        (b) => b.status === 'COMPLETED',
      );
      assert.deepEqual(st, { status: 'COMPLETED', order_id: earlier.body.order_id, order_status: 'INVOICED', tx_hash: late });
      await waitFor(
        'back session completed',
        () => s.request('GET', `/checkout/v1/sessions/${back}/status`).then((r) => r.body.status),
        (v) => v === 'COMPLETED',
      );
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('quick-pay: the same, and an order with a short payment recorded against it is never superseded', async () => {
      const payer = dev.payers[1]!.address;
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '100' } });
      assert.equal(l.status, 200, l.text);
      const open = (amount: string) => s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payer, amount } });
      const first = await open('6.20');
      const second = await open('6.20');
      assert.equal(second.status, 200, second.text);
      assert.equal((await order(first.body.terms.order_id)).status, 'EXPIRED');
      assert.equal((await s.request('GET', `/quickpay/v1/sessions/${first.body.session_id}`)).body.status, 'EXPIRED');

      await payUsdc(1, second.body.terms.pay_to_address, 6_200_000n);
      await mine(dev.rpcUrl, 1);
      await waitFor(
        'new session paid',
        () => s.request('GET', `/quickpay/v1/sessions/${second.body.session_id}`).then((r) => r.body.status),
        (v) => v === 'PAYMENT_CONFIRMED',
      );
      const late = await payUsdc(1, first.body.terms.pay_to_address, 6_200_000n);
      await mine(dev.rpcUrl, 1);
      const o = await waitFor(
        'late recorded',
        () => order(first.body.terms.order_id),
        (x) => x.observed_transfers?.length === 1,
      );
      assert.deepEqual([o.observed_transfers[0].kind, o.observed_transfers[0].tx_hash], ['late', late]);

      // A short payment recorded against a live session order: that order is being paid.
      const short = await open('7.30');
      assert.equal(short.status, 200, short.text);
      await payUsdc(1, short.body.terms.pay_to_address, 1_000_000n);
      await mine(dev.rpcUrl, 1);
      await waitFor(
        'underpaid recorded',
        () => order(short.body.terms.order_id),
        (x) => x.observed_transfers?.length === 1,
      );
      const refused = await open('7.30');
      assert.deepEqual([refused.status, refused.body.code], [409, 'order_conflict'], refused.text);
      assert.equal((await order(short.body.terms.order_id)).status, 'CHECKOUT_VERIFIED');
    });
  });
}
