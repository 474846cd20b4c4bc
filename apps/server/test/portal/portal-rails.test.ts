// The portal's orders for every rail, through real HTTP: card orders paid with the TEST processor
// (processor, reference, brand and last four, fiat amount, dispute and hold) next to a crypto order,
// in the list and the detail; the overview counts card volume in its currency. The DELEGATE view
// (callback_status, decoded failure_reason, refund) is checked on anvil in
// integration/delegate-settlement.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/db.ts';
import { buildOrderBody } from '../helpers/orders.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from '../integration/checkout-fixtures.ts';
import { CARD, createCardSession, payCard, setupCardMerchant, startCard } from '../integration/card-fixtures.ts';

for (const backend of backends()) {
  describe(`portal: orders of every rail (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let p: PortalClient;
    let paid: string;
    let disputed: string;
    let unpaid: string;
    let crypto: string;

    const cardOrder = async (number?: string) => {
      const { checkout_id } = await createCardSession(s, m);
      const start = await startCard(s, checkout_id);
      assert.equal(start.status, 200, start.text);
      if (number) assert.equal((await payCard(s, checkout_id, number)).status, 200);
      return start.body.order_id as string;
    };

    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
      paid = await cardOrder(CARD.success);
      disputed = await cardOrder(CARD.disputed);
      unpaid = await cardOrder(CARD.decline);
      const c = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      assert.equal(c.status, 402, c.text);
      crypto = c.body.order_id;
      p = new PortalClient(s);
      assert.equal((await p.login('owner@card.example', await addPortalUser(s, m.merchantId, 'owner@card.example'))).status, 200);
    });
    after(() => s?.close());

    test('the list: card rows name their rail, processor, fiat amount and reference; the crypto row its token', async () => {
      const r = await p.call('GET', '/portal/api/orders');
      assert.equal(r.status, 200, r.text);
      const byId = new Map(r.body.orders.map((o: any) => [o.order_id, o]));
      const card = byId.get(paid) as any;
      assert.equal(card.rail, 'card');
      assert.equal(card.processor, 'TEST');
      assert.equal(card.fiat_amount, '9.50');
      assert.equal(card.fiat_currency, 'EUR');
      assert.match(card.payment_reference, /^tpi_/);
      assert.equal(card.status, 'INVOICED');
      const c = byId.get(crypto) as any;
      assert.equal(c.rail, 'crypto');
      assert.equal(c.processor, undefined);
      assert.equal(c.fiat_amount, undefined);
      // the list filters card orders by their flow
      const only = await p.call('GET', '/portal/api/orders', undefined, { query: { flow: 'FIAT_TEST' } });
      assert.deepEqual(new Set(only.body.orders.map((o: any) => o.order_id)), new Set([paid, disputed, unpaid]));
    });

    test('the detail of a paid card order: processor, reference, brand and last four from the processor', async () => {
      const r = await p.call('GET', `/portal/api/orders/${paid}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.rail, 'card');
      const {
        rows: [cp],
      } = await s.db.query<{ payment_reference: string; card_brand: string; card_last4: string }>('SELECT payment_reference, card_brand, card_last4 FROM card_payments WHERE order_id = $1', [paid]);
      assert.deepEqual(r.body.card, { processor: 'TEST', state: 'succeeded', charges: 1, payment_reference: cp!.payment_reference, brand: 'visa', last4: '4242' });
      assert.deepEqual([cp!.card_brand, cp!.card_last4], ['visa', '4242'], 'stored as the processor reported them');
      assert.equal(r.body.order.fiat_amount, '9.50');
      assert.equal(r.body.order.payment_reference, cp!.payment_reference);
      assert.equal(r.body.explorer_url, undefined);
      assert.equal(r.body.proof, undefined, 'no on-chain proof for a card payment');
      // nothing of the card beyond brand and last four anywhere in the answer
      assert.ok(!r.text.includes('4242424242424242'));
    });

    test('a disputed card order: held, dispute opened; a declined one: the decline, no card yet', async () => {
      const d = (await p.call('GET', `/portal/api/orders/${disputed}`)).body;
      assert.equal(d.order.status, 'PAYMENT_CONFIRMED');
      assert.equal(d.order.dispute_status, 'opened');
      assert.deepEqual(d.order.held_reasons, ['dispute']);
      assert.equal(d.card.last4, '0259');
      const u = (await p.call('GET', `/portal/api/orders/${unpaid}`)).body;
      assert.equal(u.order.status, 'CHECKOUT_VERIFIED');
      assert.deepEqual([u.card.state, u.card.decline_code, u.card.last4], ['declined', 'card_declined', undefined]);
    });

    test('the overview counts card orders in their currency', async () => {
      const o = await p.call('GET', '/portal/api/overview');
      assert.equal(o.status, 200, o.text);
      const eur = o.body.buckets.filter((b: any) => b.token_symbol === 'EUR' && b.status === 'INVOICED');
      assert.equal(
        eur.reduce((a: number, b: any) => a + b.orders, 0),
        1,
      );
      assert.equal(eur[0].amount, '9.50');
    });
  });
}
