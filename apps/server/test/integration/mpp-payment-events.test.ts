import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyStandardWebhook, verifyWebhookSignature } from '@tollgate/protocol';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { backends } from '../helpers/db.ts';
import { challenge, finalize, pay, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';
import { createEndpoint, dispatch, Receiver, trigger } from './webhook-fixtures.ts';

/**
 * `mpp.payment.confirmed` on a real anvil chain: the claim that pays a challenge through
 * /mpp/v1/verify writes the event in its own transaction, once, for the challenge's merchant's
 * endpoints subscribed to it, with the item GET /api/v1/mpp/payments lists as payload; repeats and
 * concurrent verifies of one payment still make one event.
 */
for (const backend of backends()) {
  describe(`mpp.payment.confirmed (${backend})`, () => {
    let st: MppStack;
    let rx: Receiver;
    before(async () => {
      st = await startMppStack(backend);
      rx = await Receiver.start();
    });
    after(async () => {
      await st?.close();
      await rx?.close();
    });

    /** Asks for a challenge, pays it on chain and verifies it to 200; returns the challenge id. */
    async function paidChallenge(payerIndex: number, request: string): Promise<string> {
      const payer = st.dev.payers[payerIndex]!.address.toLowerCase();
      const c = (await challenge(st, payer, request)).body;
      const tx = await pay(st, payerIndex, c.recipient);
      await finalize(st);
      const r = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
      assert.equal(r.status, 200, r.text);
      return c.challenge_id;
    }
    const mppEvents = async () =>
      (await st.s.db.query<{ id: string; merchant_id: string; payload: any }>(`SELECT id, merchant_id, payload FROM webhook_events WHERE event = 'mpp.payment.confirmed' ORDER BY created_at, id`)).rows.map((r) => ({
        ...r,
        payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
      }));
    const deliveriesTo = async (endpointId: string) => (await st.s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId])).rows[0]!.n;

    it('the verify that pays writes the event once, with the listed payment as payload, for subscribed endpoints only', async () => {
      const ep = await createEndpoint(st.s, st.m, rx.url, ['mpp.payment.confirmed']);
      const orderOnly = await createEndpoint(st.s, st.m, `${rx.url}?orders`, ['order.invoiced']);
      const other = await st.s.createMerchant({ name: 'Other' });
      const otherEp = await createEndpoint(st.s, other, `${rx.url}?other`, ['mpp.payment.confirmed']);
      // An unpaid challenge is nobody's payment: never announced.
      assert.equal((await challenge(st, st.dev.payers[1]!.address.toLowerCase(), `${ROUTE}:unpaid`)).status, 402);

      assert.deepEqual(await mppEvents(), [], 'no payment, no event');
      const id = await paidChallenge(1, `${ROUTE}:e1`);
      const listed = (await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments')).body.data.find((p: any) => p.challenge_id === id);
      assert.ok(listed, 'the payment is listed');
      const ev = await mppEvents();
      assert.equal(ev.length, 1);
      assert.equal(ev[0]!.merchant_id, st.m.merchantId);
      assert.deepEqual(ev[0]!.payload, listed);

      const sent = await dispatch(st.s);
      assert.equal(rx.received.length, 1, JSON.stringify(sent));
      const got = rx.received[0]!;
      assert.equal(got.url, '/webhooks');
      assert.equal(got.headers['x-webhook-event'], 'mpp.payment.confirmed');
      assert.ok(verifyWebhookSignature({ secret: ep.secret, rawBody: got.body, header: got.headers['x-webhook-signature'] as string }));
      assert.equal(verifyStandardWebhook({ secret: ep.secret, headers: got.headers, rawBody: got.body, now: () => st.s.clock.now() }).ok, true);
      const env = JSON.parse(got.body);
      assert.deepEqual(Object.keys(env).sort(), ['created_at', 'event', 'id', 'payload']);
      assert.deepEqual([env.id, env.event], [ev[0]!.id, 'mpp.payment.confirmed']);
      assert.deepEqual(env.payload, listed);
      assert.deepEqual([env.payload.status, env.payload.challenge_id, env.payload.merchant_id, env.payload.request_canonical], ['paid', id, st.m.merchantId, `${ROUTE}:e1`]);

      // Exactly once: a repeated verify returns the same receipt and writes nothing more.
      const again = await verify(st, { challenge_id: id, tx_hash: env.payload.tx_hash, payer_addr: env.payload.payer, mac: (await st.s.db.query<{ mac: string }>('SELECT mac FROM mpp_challenges WHERE id = $1', [id])).rows[0]!.mac });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.receipt, env.payload.receipt);
      await dispatch(st.s);
      assert.equal((await mppEvents()).length, 1);
      assert.equal(rx.received.length, 1);
      assert.equal(await deliveriesTo(ep.id), 1);
      assert.equal(await deliveriesTo(orderOnly.id), 0, 'an endpoint not subscribed to the event gets nothing');
      assert.equal(await deliveriesTo(otherEp.id), 0, "another merchant's endpoint gets nothing");
    });

    it('concurrent verifies: one event per payment (20 verifies of one challenge; one transaction presented for 10 challenges)', async () => {
      const payer = st.dev.payers[2]!.address.toLowerCase();
      const c = (await challenge(st, payer, `${ROUTE}:same`)).body;
      const tx = await pay(st, 2, c.recipient);
      const cs = [];
      for (let i = 0; i < 10; i++) cs.push((await challenge(st, payer, `${ROUTE}:one-tx-${i}`)).body);
      const tx2 = await pay(st, 2, c.recipient);
      await finalize(st);
      const rs = await Promise.all([
        ...Array.from({ length: 20 }, () => verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac })),
        ...cs.map((x) => verify(st, { challenge_id: x.challenge_id, tx_hash: tx2, payer_addr: payer, mac: x.mac })),
      ]);
      assert.deepEqual(
        rs.slice(0, 20).map((r) => r.status),
        Array(20).fill(200),
      );
      assert.deepEqual(
        rs
          .slice(20)
          .map((r) => r.status)
          .sort(),
        [200, ...Array(9).fill(409)],
      );
      const mine = new Set([c.challenge_id, ...cs.map((x) => x.challenge_id)]);
      const ev = (await mppEvents()).filter((e) => mine.has(e.payload.challenge_id));
      const winner = cs[rs.slice(20).findIndex((r) => r.status === 200)]!.challenge_id;
      assert.deepEqual(ev.map((e) => e.payload.challenge_id).sort(), [c.challenge_id, winner].sort());
    });

    it('a triggered test event has the real shape, test markers, and a receipt that never verifies', async () => {
      const eventId = await trigger(st.s, st.m, 'mpp.payment.confirmed');
      const { rows } = await st.s.db.query<{ payload: any; test: boolean }>('SELECT payload, test FROM webhook_events WHERE id = $1', [eventId]);
      const p = typeof rows[0]!.payload === 'string' ? JSON.parse(rows[0]!.payload) : rows[0]!.payload;
      assert.equal(rows[0]!.test, true);
      const listed = (await st.s.signed(st.m, 'GET', '/api/v1/mpp/payments')).body.data[0];
      assert.deepEqual(Object.keys(p).sort(), [...Object.keys(listed), 'livemode', 'test'].sort());
      assert.deepEqual([p.status, p.merchant_id, p.livemode, p.test], ['paid', st.m.merchantId, false, true]);
      const jwks = (await st.s.request('GET', '/.well-known/jwks.json')).body;
      const v = verifyMppReceipt(p.receipt, jwks);
      assert.equal(v.ok, false, JSON.stringify(v));
      assert.deepEqual(JSON.parse(Buffer.from(p.receipt.split('.')[1], 'base64url').toString()).challenge_id, p.challenge_id);
    });
  });
}
