import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { createSession, sessionTransitions, startCheckoutServer } from './checkout-fixtures.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

function waitForSession(s: TestServer, id: string, want: string, timeoutMs = 20_000) {
  return waitFor(
    `session ${want}`,
    async () => (await s.request('GET', `/checkout/v1/sessions/${id}/status`)).body,
    (last: any) => last.status === want,
    { timeoutMs },
  );
}

/**
 * The hosted-checkout flow end to end on a real anvil chain, through HTTP and the running watcher:
 * merchant creates a session → the page binds a payer → the payer transfers → the watcher
 * confirms and invoices the order → the session is COMPLETED and `quickpay.checkout.completed`
 * is in the outbox, in the order the transactions committed.
 */
for (const backend of backends()) {
  describe(`checkout end to end on anvil (${backend})`, () => {
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

    it('create session → bind → pay → order INVOICED, session COMPLETED, completion event emitted', async () => {
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const payer = dev.payers[0]!;
      const created = await createSession(s, m, {
        price: '25.50',
        client_reference_id: 'e2e-cart-1',
        line_items_json: JSON.stringify([
          { name: 'Hoodie', quantity: 1, amount: '20.50' },
          { name: 'Socks', quantity: 2, amount: '2.50' },
        ]),
      });
      const id = created.checkout_id;

      const view = (await s.request('GET', `/checkout/v1/sessions/${id}`)).body;
      const option = view.payment_options.find((o: any) => o.token_symbol === 'USDC');
      assert.deepEqual([option.chain_id, option.amount_wei, option.decimals], [dev.chainId, '25500000', usdc.decimals]);

      const bound = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payer.address } });
      assert.equal(bound.status, 200, bound.text);
      const t = bound.body;
      assert.deepEqual([t.pay_to_address, t.amount_wei, t.token_contract], [MERCHANT_WALLET, '25500000', usdc.address.toLowerCase()]);
      assert.equal((await s.request('GET', `/checkout/v1/sessions/${id}/status`)).body.status, 'BOUND');

      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: t.pay_to_address as Hex, amount: BigInt(t.amount_wei) });
      await mine(dev.rpcUrl, 1); // depth 2 = confirmations
      // PAYMENT_CONFIRMED never completes a session (docs/orders.md: PAYMENT_CONFIRMED is not permission to ship).
      const deadline = Date.now() + 20_000;
      let st: any;
      do {
        st = (await s.request('GET', `/checkout/v1/sessions/${id}/status`)).body;
        if (st.order_status === 'PAYMENT_CONFIRMED') break;
        await new Promise((r) => setTimeout(r, 50));
      } while (Date.now() < deadline);
      assert.deepEqual([st.status, st.order_status, st.tx_hash], ['BOUND', 'PAYMENT_CONFIRMED', hash]);
      await mine(dev.rpcUrl, 2); // depth 4 = finality
      const done = await waitForSession(s, id, 'COMPLETED');
      assert.deepEqual(done, { status: 'COMPLETED', order_id: t.order_id, order_status: 'INVOICED', tx_hash: hash });

      const order = (await s.signed(m, 'GET', `/api/v1/orders/${t.order_id}`)).body;
      assert.deepEqual([order.status, order.checkout_id, order.tx_hash], ['INVOICED', id, hash]);

      const events = (await s.db.query<any>(`SELECT event, payload FROM webhook_events WHERE order_id = $1 ORDER BY seq`, [t.order_id])).rows;
      const names = events.map((e) => e.event);
      assert.equal(names.filter((n) => n === 'quickpay.checkout.completed').length, 1);
      assert.ok(names.indexOf('order.invoiced') < names.indexOf('quickpay.checkout.completed'), names.join(','));
      assert.deepEqual(events.find((e) => e.event === 'quickpay.checkout.completed').payload, {
        checkout_id: id,
        order_id: t.order_id,
        order_status: 'INVOICED',
        tx_hash: hash,
        client_reference_id: 'e2e-cart-1',
        line_items: [
          { name: 'Hoodie', quantity: 1, amount: '20.50' },
          { name: 'Socks', quantity: 2, amount: '2.50' },
        ],
        public_metadata: { campaign: 'spring' },
      });

      assert.deepEqual(
        (await sessionTransitions(s, id)).map((x) => `${x.from_status}>${x.to_status}:${x.trigger}`),
        ['null>OPEN:create', 'OPEN>BOUND:bind', 'BOUND>COMPLETED:complete'],
      );
      const bindAgain = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payer.address } });
      assert.deepEqual([bindAgain.status, bindAgain.body.code], [410, 'session_not_payable']);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });
  });
}
