import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { chainConfigOf, startTestChain, tickedAtHead } from './watcher-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Quick-pay end to end on a real anvil chain with the running watcher: a fixed-price link and an
 * any-amount link are paid by real ERC-20 transfers; the session is PAYMENT_CONFIRMED while its
 * order is, stays so when the order is INVOICED, and `quickpay.checkout.completed` is emitted once.
 */
for (const backend of backends()) {
  describe(`quick-pay on anvil (${backend})`, () => {
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

    const status = (id: string) => s.request('GET', `/quickpay/v1/sessions/${id}`).then((r) => r.body);
    const events = (sessionId: string) => s.db.query<{ payload: any }>(`SELECT payload FROM webhook_events WHERE event = 'quickpay.checkout.completed' AND payload::jsonb ->> 'session_id' = $1`, [sessionId]).then((r) => r.rows);

    it('fixed-price link paid with crypto: session PAYMENT_CONFIRMED, then order INVOICED and quickpay.checkout.completed once', async () => {
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const payer = dev.payers[0]!;
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Ticket', price: '7.25' } });
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id } });
      const r = await s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payer.address, memo: 'seat 12' } });
      assert.equal(r.status, 200, r.text);
      const t = r.body.terms;
      assert.deepEqual([t.pay_to_address, t.amount_wei, t.token_contract], [MERCHANT_WALLET, '7250000', usdc.address.toLowerCase()]);

      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: t.pay_to_address as Hex, amount: BigInt(t.amount_wei) });
      await mine(dev.rpcUrl, 1);
      const confirmed = await waitFor(
        'PAYMENT_CONFIRMED',
        () => status(r.body.session_id),
        (v) => v.order_status === 'PAYMENT_CONFIRMED',
      );
      assert.deepEqual([confirmed.status, confirmed.tx_hash, confirmed.amount_paid_wei], ['PAYMENT_CONFIRMED', hash, '7250000']);
      assert.equal((await events(r.body.session_id)).length, 0, 'PAYMENT_CONFIRMED is not completion');
      await mine(dev.rpcUrl, 2);
      const invoiced = await waitFor(
        'INVOICED',
        () => status(r.body.session_id),
        (v) => v.order_status === 'INVOICED',
      );
      assert.equal(invoiced.status, 'PAYMENT_CONFIRMED', 'interface mapping: order INVOICED → crypto session PAYMENT_CONFIRMED');
      await mine(dev.rpcUrl, 3);
      await new Promise((res) => setTimeout(res, 300));
      const ev = await events(r.body.session_id);
      assert.equal(ev.length, 1, 'completed once');
      assert.deepEqual(ev[0]!.payload, {
        checkout_id: r.body.session_id,
        session_id: r.body.session_id,
        link_id: l.body.link_id,
        rail: 'crypto',
        order_id: t.order_id,
        order_status: 'INVOICED',
        tx_hash: hash,
        client_reference_id: 'seat 12',
        memo: 'seat 12',
        amount: '7.25',
        amount_paid: '7.25',
        amount_paid_wei: '7250000',
        chain_id: dev.chainId,
        token_symbol: 'USDC',
        line_items: [{ name: 'Ticket', quantity: 1, amount: '7.25' }],
        public_metadata: { product_id: p.body.product_id },
      });
      // a repeated request with nothing new: status only (settled)
      const rec = (await s.signed(m, 'GET', `/api/v1/payment-links/${l.body.link_id}/sessions`)).body.data[0];
      assert.deepEqual([rec.status, rec.order_status, rec.amount_paid_wei, rec.memo, typeof rec.completed_at], ['PAYMENT_CONFIRMED', 'INVOICED', '7250000', 'seat 12', 'string']);
    });

    it('any-amount link: the payer’s amount is the order amount; the event carries amount paid and memo', async () => {
      const usdt = dev.tokens.find((t) => t.symbol === 'USDT')!;
      const payer = dev.payers[1]!;
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '0.5', max_amount: '100' } });
      const r = await s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: dev.chainId, token_symbol: 'USDT', from_address: payer.address, amount: '3.141592', memo: 'tip' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.terms.amount_wei, '3141592');
      await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdt.address, to: r.body.terms.pay_to_address as Hex, amount: 3141592n });
      await mine(dev.rpcUrl, 4);
      await waitFor(
        'completion event',
        () => events(r.body.session_id),
        (v) => v.length === 1,
      );
      const [ev] = await events(r.body.session_id);
      assert.deepEqual([ev!.payload.amount_paid, ev!.payload.memo, ev!.payload.line_items[0].name], ['3.141592', 'tip', 'Payment']);
    });

    it('a session paid in two transfers completes when the total is reached (short payments summed)', async () => {
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const payer = dev.payers[2]!;
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Chair', price: '10' } });
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id } });
      const r = await s.request('POST', `/quickpay/v1/links/${l.body.link_id}/sessions`, { body: { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payer.address } });
      assert.equal(r.status, 200, r.text);
      const pay = (amount: bigint) => transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: r.body.terms.pay_to_address as Hex, amount });
      const first = await pay(4_000_000n);
      await mine(dev.rpcUrl, 5);
      // One short transfer is recorded against the session's order and pays nothing on its own.
      const recorded = await waitFor(
        'underpaid recorded',
        () => s.signed(m, 'GET', `/api/v1/orders/${r.body.terms.order_id}`).then((x) => x.body),
        (o) => o.observed_transfers?.length === 1,
      );
      assert.deepEqual([recorded.status, recorded.observed_transfers[0].kind, recorded.observed_transfers[0].tx_hash], ['CHECKOUT_VERIFIED', 'underpaid', first]);
      await tickedAtHead(s.db, dev); // a whole watcher tick after the short payment: still short
      assert.equal((await status(r.body.session_id)).status, 'OPEN');
      const second = await pay(6_000_000n);
      await mine(dev.rpcUrl, 5);
      const done = await waitFor(
        'summed',
        () => status(r.body.session_id),
        (v) => v.status === 'PAYMENT_CONFIRMED',
      );
      assert.deepEqual([done.order_status, done.tx_hash, done.amount_paid_wei], ['INVOICED', second, '10000000']);
      await tickedAtHead(s.db, dev); // a whole watcher tick after the completion: no second one
      const ev = await events(r.body.session_id);
      assert.equal(ev.length, 1, 'completed once');
      assert.deepEqual([ev[0]!.payload.amount_paid, ev[0]!.payload.tx_hash], ['10', second]);
      const audit = (await s.db.query<{ trigger: string; detail: any }>(`SELECT trigger, detail FROM order_transitions WHERE order_id = $1 AND to_status = 'INVOICED'`, [r.body.terms.order_id])).rows;
      assert.deepEqual(
        audit.map((a) => [a.trigger, a.detail.summed.map((x: any) => [x.tx_hash, x.amount_wei])]),
        [
          [
            'accept',
            [
              [first, '4000000'],
              [second, '6000000'],
            ],
          ],
        ],
      );
    });
  });
}
