import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TollgateApiError, TollgateClient } from '../../../../packages/sdk/src/index.ts';
import { backends } from '../helpers/db.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { CARD, createCardSession, eventsOf, payCard, startCard, setupCardMerchant } from './card-fixtures.ts';
import { catchUpClock, createEndpoint, dispatch, Receiver } from './webhook-fixtures.ts';

/**
 * The one refunds model on the card rail (docs/refunds.md), through the merchant API with the TEST
 * processor: concurrent partial refunds never add up to more than was paid (the order row lock),
 * a refund over what remains is refused with a code and changes nothing, a second full refund is
 * refused, the refunds list, and `order.refunded` delivered once per refund to a real receiver.
 */
for (const backend of backends()) {
  describe(`refunds: card orders (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let rx: Receiver;
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
      rx = await Receiver.start();
      await createEndpoint(s, m, rx.url, ['order.refunded']);
    });
    after(async () => {
      await s?.close();
      await rx?.close();
    });

    const paidCardOrder = async () => {
      const { checkout_id } = await createCardSession(s, m);
      const st = await startCard(s, checkout_id);
      assert.equal(st.status, 200, st.text);
      const paid = await payCard(s, checkout_id, CARD.success);
      assert.equal(paid.body.order_status, 'INVOICED', paid.text);
      return st.body.order_id as string;
    };
    const refundRows = async (orderId: string) =>
      (await s.db.query<{ id: string; amount: string; status: string; rail: string; currency: string }>('SELECT id, amount::text AS amount, status, rail, currency FROM refunds WHERE order_id = $1 ORDER BY created_at, id', [orderId])).rows;

    it('concurrent partial refunds: never more than paid; over the remainder refused and nothing changed; a double full refund refused', async () => {
      const id = await paidCardOrder();
      // 9.50 paid; six concurrent refunds of 2.00: exactly four fit
      const answers = await Promise.all(Array.from({ length: 6 }, () => s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '2.00' } })));
      const ok = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status !== 200);
      assert.equal(ok.length, 4, answers.map((r) => r.text).join('\n'));
      assert.deepEqual(
        refused.map((r) => [r.status, r.body.code]),
        [
          [400, 'refund_exceeds_payment'],
          [400, 'refund_exceeds_payment'],
        ],
      );
      for (const r of ok) assert.deepEqual([r.body.rail, r.body.status, r.body.amount, r.body.amount_base_units, r.body.currency], ['card', 'succeeded', '2.00', '200', 'EUR']);
      assert.equal(new Set(ok.map((r) => r.body.refund_id)).size, 4);
      let rows = await refundRows(id);
      assert.deepEqual(
        rows.map((r) => [r.rail, r.amount, r.status, r.currency]),
        Array.from({ length: 4 }, () => ['card', '200', 'succeeded', 'EUR']),
      );

      // 1.50 remains: 2.00 is refused with a code, and nothing changes
      const over = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { amount: '2.00' } });
      assert.deepEqual([over.status, over.body.code, over.body.param], [400, 'refund_exceeds_payment', 'amount']);
      assert.match(over.body.error, /1\.50 EUR/);
      assert.deepEqual(await refundRows(id), rows);
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body.refunded_amount, '8.00');

      const rest = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: { reason: 'the rest' } });
      assert.equal(rest.status, 200, rest.text);
      assert.deepEqual([rest.body.amount, rest.body.refunded_amount, rest.body.reason], ['1.50', '9.50', 'the rest']);
      const again = await s.signed(m, 'POST', `/api/v1/orders/${id}/refunds`, { body: {} });
      assert.deepEqual([again.status, again.body.code], [400, 'card_order_not_refundable']);
      rows = await refundRows(id);
      assert.equal(rows.length, 5);

      const list = await s.signed(m, 'GET', `/api/v1/orders/${id}/refunds`);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.body.refunds.map((r: any) => r.refund_id),
        rows.map((r) => r.id),
      );
      assert.equal(list.body.refunds[4].refunded_amount, '9.50');

      // one order.refunded per refund, written and delivered once
      const events = (await eventsOf(s, id)).filter(([e]) => e === 'order.refunded').map(([, p]) => p.refund_id);
      assert.deepEqual(events.sort(), rows.map((r) => r.id).sort());
      catchUpClock(s);
      const deadline = Date.now() + 15_000;
      const delivered = () => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.event === 'order.refunded' && b.payload.order_id === id);
      while (delivered().length < 5 && Date.now() < deadline) {
        await dispatch(s);
        await new Promise((r) => setTimeout(r, 50));
      }
      await dispatch(s);
      const got = delivered().map((b) => b.payload.refund_id);
      assert.deepEqual([...got].sort(), rows.map((r) => r.id).sort(), 'each refund delivered exactly once');
    });

    it('the SDK: refundOrder and listRefunds, an over-refund thrown with its code', async () => {
      const id = await paidCardOrder();
      const sdk = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
      const r = await sdk.refundOrder(id, { amount: '1.25', reason: 'sdk' });
      assert.deepEqual([r.rail, r.status, r.amount, r.amount_base_units, r.currency, r.reason, r.refunded_amount], ['card', 'succeeded', '1.25', '125', 'EUR', 'sdk', '1.25']);
      await assert.rejects(sdk.refundOrder(id, { amount: '9.00' }), (e: unknown) => e instanceof TollgateApiError && e.code === 'refund_exceeds_payment' && e.status === 400);
      const list = await sdk.listRefunds(id);
      assert.deepEqual(
        list.map((x) => x.refund_id),
        [r.refund_id],
      );
    });

    it('another merchant can neither list nor refund the order', async () => {
      const id = await paidCardOrder();
      const other = await setupCardMerchant(s);
      assert.equal((await s.signed(other, 'POST', `/api/v1/orders/${id}/refunds`, { body: {} })).status, 404);
      assert.equal((await s.signed(other, 'GET', `/api/v1/orders/${id}/refunds`)).status, 404);
      assert.deepEqual(await refundRows(id), []);
    });
  });
}
