import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import { verifyStandardWebhook, verifyWebhookSignature } from '@tollgate/protocol';
import type { Hex } from 'viem';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';
import { catchUpClock, createEndpoint, Receiver } from './webhook-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The whole path on a real anvil chain with every worker running (role all): payer transfer →
 * watcher → order transitions → outbox → running dispatcher → the merchant's receiver gets
 * order.payment_confirmed, then order.invoiced, both signed.
 */
for (const backend of backends()) {
  describe(`webhooks from a real payment (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    let rx: Receiver;
    before(async () => {
      dev = await startTestChain();
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { confirmations: 2, finalityConfirmations: 4, pollIntervalMs: 50 })] });
      m = await setupMerchant(s);
      rx = await Receiver.start();
    });
    after(async () => {
      await s?.close();
      await rx?.close();
      await dev?.stop();
    });

    function waitForEvent(event: string, timeoutMs = 20_000) {
      return waitFor(
        () => `${event}; got ${rx.received.map((r) => r.headers['x-webhook-event']).join(', ')}`,
        () => {
          const got = rx.received.find((r) => r.headers['x-webhook-event'] === event);
          if (!got) catchUpClock(s); // the dispatcher runs on the TestClock; order events carry wall-clock time
          return got;
        },
        undefined,
        { timeoutMs },
      );
    }

    it('delivers order.payment_confirmed and order.invoiced for a paid order', async () => {
      const ep = await createEndpoint(s, m, rx.url, ['order.payment_confirmed', 'order.invoiced']);
      const payer = dev.payers[0]!;
      const created = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, from_address: payer.address, amount_wei: '3100000' }) });
      assert.equal(created.status, 402, created.text);
      const orderId = created.body.order_id as string;
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: MERCHANT_WALLET as Hex, amount: 3_100_000n });
      await mine(dev.rpcUrl, 1);
      const confirmed = await waitForEvent('order.payment_confirmed');
      await mine(dev.rpcUrl, 2);
      const invoiced = await waitForEvent('order.invoiced');

      for (const [got, status] of [
        [confirmed, 'PAYMENT_CONFIRMED'],
        [invoiced, 'INVOICED'],
      ] as const) {
        assert.ok(verifyWebhookSignature({ secret: ep.secret, rawBody: got.body, header: got.headers['x-webhook-signature'] as string }));
        assert.equal(verifyStandardWebhook({ secret: ep.secret, headers: got.headers, rawBody: got.body, now: () => s.clock.now() }).ok, true);
        const env = JSON.parse(got.body);
        assert.equal(env.payload.order_id, orderId);
        assert.equal(env.payload.status, status);
        assert.equal(env.payload.tx_hash, hash);
      }
      assert.notEqual(JSON.parse(confirmed.body).id, JSON.parse(invoiced.body).id, 'two events, two ids');
      const polled = await s.signed(m, 'GET', `/api/v1/orders/${orderId}`);
      assert.equal(polled.body.status, 'INVOICED', 'polling and the webhook agree');
    });
  });
}
