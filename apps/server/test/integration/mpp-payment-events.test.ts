import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyStandardWebhook, verifyWebhookSignature } from '@tollgate/protocol';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import type { Database } from '../../src/db/database.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { emitPaymentEvents } from '../../src/mpp/events.ts';
import { backends, createScratchDatabase, dropScratchDatabase, type Backend } from '../helpers/db.ts';
import { challenge, finalize, pay, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';
import { createEndpoint, dispatch, Receiver, trigger } from './webhook-fixtures.ts';

/**
 * `mpp.payment.confirmed` on a real anvil chain: a challenge paid through /mpp/v1/verify is
 * announced by the worker's step (not by the verify), once, to the challenge's merchant's endpoints
 * subscribed to it, with the item GET /api/v1/mpp/payments lists as payload; concurrent worker
 * steps (SKIP LOCKED) still announce each payment once. Migration 0018 counts payments made before
 * it as announced.
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
    const deliveriesTo = async (endpointId: string) =>
      (await st.s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId])).rows[0]!.n;

    it('the worker step announces a paid challenge once, with the listed payment as payload, to subscribed endpoints only', async () => {
      const ep = await createEndpoint(st.s, st.m, rx.url, ['mpp.payment.confirmed']);
      const orderOnly = await createEndpoint(st.s, st.m, `${rx.url}?orders`, ['order.invoiced']);
      const other = await st.s.createMerchant({ name: 'Other' });
      const otherEp = await createEndpoint(st.s, other, `${rx.url}?other`, ['mpp.payment.confirmed']);
      // An unpaid challenge is nobody's payment: never announced.
      assert.equal((await challenge(st, st.dev.payers[1]!.address.toLowerCase(), `${ROUTE}:unpaid`)).status, 402);

      const id = await paidChallenge(1, `${ROUTE}:e1`);
      assert.deepEqual(await mppEvents(), [], 'the verify itself emits nothing');

      assert.equal(await st.s.tg.deps.mpp.emitPaymentEvents(), 1);
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
      assert.deepEqual(
        [env.payload.status, env.payload.challenge_id, env.payload.merchant_id, env.payload.request_canonical],
        ['paid', id, st.m.merchantId, `${ROUTE}:e1`],
      );

      // Exactly once: the next steps find nothing, and nothing more is sent.
      assert.equal(await st.s.tg.deps.mpp.emitPaymentEvents(), 0);
      await dispatch(st.s);
      assert.equal((await mppEvents()).length, 1);
      assert.equal(rx.received.length, 1);
      assert.equal(await deliveriesTo(ep.id), 1);
      assert.equal(await deliveriesTo(orderOnly.id), 0, 'an endpoint not subscribed to the event gets nothing');
      assert.equal(await deliveriesTo(otherEp.id), 0, "another merchant's endpoint gets nothing");
    });

    it('two worker steps running at once announce each payment once (SKIP LOCKED)', async () => {
      const before = (await mppEvents()).length;
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await paidChallenge(2 + (i % 3), `${ROUTE}:c${i}`));
      // Batches of one, so the two steps interleave row by row instead of one taking everything.
      const step = async () => {
        let n = 0;
        while ((await emitPaymentEvents(st.s.db, st.s.clock, 1)) === 1) n++;
        return n;
      };
      const [a, b] = await Promise.all([step(), step()]);
      assert.equal(a + b, ids.length);
      const ev = await mppEvents();
      assert.equal(ev.length, before + ids.length);
      assert.deepEqual(ev.map((e) => e.payload.challenge_id).filter((id) => ids.includes(id)).sort(), [...ids].sort());
      const { rows } = await st.s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM mpp_challenges WHERE status = 'PAID' AND notified_at IS NULL`);
      assert.equal(rows[0]!.n, 0);
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

  describe(`migration 0018 on existing payments (${backend})`, () => {
    it('marks challenges already PAID as announced, leaves OPEN ones to be announced when paid', async () => {
      const { db, drop } = await rawDatabase(backend);
      try {
        const all = listMigrations();
        const v = all.findIndex((m) => m.name === 'mpp_payment_events');
        assert.equal(all[v]!.version, 18);
        await migrate(db, all.slice(0, v));
        await db.exec(`INSERT INTO merchants (id, name) VALUES ('mch_old', 'Old')`);
        await insertChallenge(db, 'ch_old_paid', true);
        await insertChallenge(db, 'ch_old_open', false);

        assert.deepEqual(await migrate(db, all), all.slice(v).map((m) => m.version));
        const { rows } = await db.query<{ id: string; notified: boolean }>('SELECT id, notified_at IS NOT NULL AS notified FROM mpp_challenges ORDER BY id');
        assert.deepEqual(rows, [{ id: 'ch_old_open', notified: false }, { id: 'ch_old_paid', notified: true }]);
        const clock = { now: () => Date.now() };
        assert.equal(await emitPaymentEvents(db, clock), 0, 'no event for a payment made before the migration');

        // Paid after the migration: announced.
        await db.query(`UPDATE mpp_challenges SET status = 'PAID', tx_hash = $2, log_index = 0, receipt_jws = $3, paid_at = now() WHERE id = $1`, ['ch_old_open', `0x${'cd'.repeat(32)}`, receiptOf('ch_old_open')]);
        assert.equal(await emitPaymentEvents(db, clock), 1);
        const ev = await db.query<{ merchant_id: string; payload: any }>(`SELECT merchant_id, payload FROM webhook_events WHERE event = 'mpp.payment.confirmed'`);
        assert.equal(ev.rows.length, 1);
        const payload = typeof ev.rows[0]!.payload === 'string' ? JSON.parse(ev.rows[0]!.payload) : ev.rows[0]!.payload;
        assert.deepEqual([ev.rows[0]!.merchant_id, payload.challenge_id, payload.status], ['mch_old', 'ch_old_open', 'paid']);
      } finally {
        await drop();
      }
    });
  });
}

/** An empty database, no migrations applied. */
async function rawDatabase(backend: Backend): Promise<{ db: Database; drop(): Promise<void> }> {
  if (backend === 'pglite') {
    const db = await openPglite(undefined);
    return { db, drop: () => db.close() };
  }
  const { url, name } = await createScratchDatabase();
  const db = await openPostgres(url, { max: 2 });
  return {
    db,
    drop: async () => {
      await db.close().catch(() => {});
      await dropScratchDatabase(name);
    },
  };
}

/** A receipt-shaped JWS whose payload is the claims (the view decodes it; nobody verifies it here). */
function receiptOf(challengeId: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'EdDSA', kid: 'k' })}.${b64({ challenge_id: challengeId, merchant_id: 'mch_old' })}.sig`;
}

async function insertChallenge(db: Database, id: string, paid: boolean): Promise<void> {
  await db.query(
    `INSERT INTO mpp_challenges (id, merchant_id, route_canonical, request_canonical, payer_addr, chain_id, token_contract, recipient,
       amount_wei, route_pricing_version, mac, issued_at, expires_at, status, tx_hash, log_index, receipt_jws, paid_at)
     VALUES ($1, 'mch_old', 'GET:api:data', 'GET:api:data', $2, 31337, $3, $2, 1000, 1, 'mac', now(), now() + interval '5 minutes',
       $4, $5, $6, $7, $8)`,
    [id, `0x${'11'.repeat(20)}`, `0x${'aa'.repeat(20)}`, paid ? 'PAID' : 'OPEN', paid ? `0x${'ab'.repeat(32)}` : null, paid ? 0 : null, paid ? receiptOf(id) : null, paid ? new Date() : null],
  );
}
