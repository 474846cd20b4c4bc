// waitForOrder against a running Tollgate, with status changes driven directly in its database
// (UPDATE orders SET status …), so each valid jump can be staged deterministically.
//
// The end-to-end case of an order actually paid on anvil (watcher → PAYMENT_CONFIRMED → INVOICED)
// is in paid.integration.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../../../apps/server/test/helpers/db.ts';
import { PAYER, setupMerchant } from '../../../apps/server/test/helpers/orders.ts';
import { fakeChain, startTestServer, type TestServer } from '../../../apps/server/test/helpers/server.ts';
import { TollgateApiError, TollgateClient, TollgateTimeoutError, type OrderStatusRecord } from '../src/index.ts';

const CHAIN = fakeChain();
let seq = 0;

for (const backend of backends()) {
  describe(`waitForOrder against a running Tollgate (${backend})`, () => {
    let s: TestServer;
    let client: TollgateClient;

    before(async () => {
      s = await startTestServer({ backend, chains: [CHAIN] });
      const m = await setupMerchant(s, { topUp: '50.00' });
      client = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(() => s.close());

    async function newOrder(): Promise<string> {
      seq++;
      const o = await client.createOrder({ dappOrderId: `wait-${Date.now()}-${seq}`, chainId: CHAIN.chainId, tokenSymbol: 'USDC', fromAddress: PAYER, amountWei: String(3_000_000 + seq) });
      return o.orderId;
    }
    const setStatus = async (id: string, status: string, extra = '') => {
      await s.db.query(`UPDATE orders SET status = $2, updated_at = now()${extra} WHERE id = $1`, [id, status]);
    };

    it('reports a jump CHECKOUT_VERIFIED → INVOICED (PAYMENT_CONFIRMED never seen) and resolves on INVOICED', async () => {
      const id = await newOrder();
      const seen: [string | undefined, string][] = [];
      const final = await client.waitForOrder(id, {
        intervalMs: 20,
        onStatusChange: async (o, prev) => {
          seen.push([prev, o.status]);
          // Let the poller see CHECKOUT_VERIFIED a few times, then jump straight to INVOICED.
          if (o.status === 'CHECKOUT_VERIFIED') setTimeout(() => void setStatus(id, 'INVOICED', ', invoiced_at = now()'), 120);
        },
        signal: AbortSignal.timeout(10_000),
      });
      assert.equal(final.status, 'INVOICED');
      assert.equal(final.order_id, id);
      assert.ok(final.invoiced_at);
      assert.deepEqual(seen, [
        [undefined, 'CHECKOUT_VERIFIED'],
        ['CHECKOUT_VERIFIED', 'INVOICED'],
      ]);
    });

    it('reports every observed change, in order: CHECKOUT_VERIFIED → PAYMENT_CONFIRMED → CHECKOUT_VERIFIED (reorg) → INVOICED', async () => {
      const id = await newOrder();
      const next: Record<string, string[]> = { CHECKOUT_VERIFIED: ['PAYMENT_CONFIRMED', 'INVOICED'], PAYMENT_CONFIRMED: ['CHECKOUT_VERIFIED'] };
      const seen: string[] = [];
      const records: OrderStatusRecord[] = [];
      const final = await client.waitForOrder(id, {
        intervalMs: 15,
        timeoutMs: 10_000,
        onStatusChange: async (o) => {
          seen.push(o.status);
          records.push(o);
          const to = next[o.status]?.shift();
          // Applied after the callback returns, so the change is seen by a later poll, not this one.
          if (to) setTimeout(() => void setStatus(id, to), 60);
        },
      });
      assert.deepEqual(seen, ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'CHECKOUT_VERIFIED', 'INVOICED']);
      assert.equal(final.status, 'INVOICED');
      assert.ok(records.every((r) => r.order_id === id));
    });

    for (const status of ['EXPIRED', 'FAILED'] as const) {
      it(`resolves, not throws, on ${status} with the final record`, async () => {
        const id = await newOrder();
        await setStatus(id, status, status === 'FAILED' ? `, failure_reason = 'operator marked failed'` : '');
        const seen: string[] = [];
        const final = await client.waitForOrder(id, { intervalMs: 20, timeoutMs: 5000, onStatusChange: (o) => void seen.push(o.status) });
        assert.equal(final.status, status);
        assert.deepEqual(seen, [status]);
        if (status === 'FAILED') assert.equal(final.failure_reason, 'operator marked failed');
      });
    }

    it('resolves on CANCELLED when the order is cancelled while waiting', async () => {
      const id = await newOrder();
      const seen: string[] = [];
      const waiting = client.waitForOrder(id, { intervalMs: 20, timeoutMs: 5000, onStatusChange: (o) => void seen.push(o.status) });
      await new Promise((r) => setTimeout(r, 100));
      await client.cancelOrder(id);
      const final = await waiting;
      assert.equal(final.status, 'CANCELLED');
      assert.deepEqual(seen, ['CHECKOUT_VERIFIED', 'CANCELLED']);
    });

    it('timeoutMs: rejects with TollgateTimeoutError carrying the last record', async () => {
      const id = await newOrder();
      const t0 = Date.now();
      await assert.rejects(client.waitForOrder(id, { intervalMs: 25, timeoutMs: 300 }), (err: unknown) => {
        assert.ok(err instanceof TollgateTimeoutError);
        assert.equal(err.timeoutMs, 300);
        assert.equal((err.lastOrder as OrderStatusRecord).status, 'CHECKOUT_VERIFIED');
        assert.match(err.message, /CHECKOUT_VERIFIED/);
        return true;
      });
      const elapsed = Date.now() - t0;
      assert.ok(elapsed >= 290 && elapsed < 2000, `elapsed ${elapsed}`);
    });

    it('AbortSignal: rejects with the signal reason and stops polling', async () => {
      const id = await newOrder();
      const ac = new AbortController();
      let changes = 0;
      const waiting = client.waitForOrder(id, { intervalMs: 25, signal: ac.signal, onStatusChange: () => void changes++ });
      setTimeout(() => ac.abort(new Error('shutting down')), 150);
      await assert.rejects(waiting, /shutting down/);
      assert.equal(changes, 1);
      // An already-aborted signal rejects at once without a request.
      await assert.rejects(client.waitForOrder(id, { signal: AbortSignal.abort(new Error('early')) }), /early/);
    });

    it('a non-transient error (unknown order) rejects at once instead of polling forever', async () => {
      await assert.rejects(client.waitForOrder('ord_doesNotExist1234567', { intervalMs: 10 }), (err: unknown) => {
        assert.ok(err instanceof TollgateApiError);
        assert.equal(err.code, 'order_not_found');
        return true;
      });
    });
  });
}
