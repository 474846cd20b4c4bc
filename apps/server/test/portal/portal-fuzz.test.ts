// The portal's query parameters and the card notification route under hostile input (issue 29,
// item 6): the three 500s an outside review found, as regressions, and bounded property tests
// (fast-check, seeded: FUZZ_SEED replays, FUZZ_RUNS sets the runs) that no input answers 5xx or
// an error without a catalogued code, and that a refused notification changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ERROR_CATALOG } from '@tollgate/protocol';
import { ROUTES } from '../../src/routes.ts';
import { signTestNotification } from '../../src/rails/card/test/processor.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody } from '../helpers/orders.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import type { Creds, TestResponse, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from '../integration/checkout-fixtures.ts';
import { createCardSession, setupCardMerchant, startCard } from '../integration/card-fixtures.ts';

// Runs per property: bounded so each property stays under 10 s on a loaded 2-core CI box.
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const QUERY_RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const params = (numRuns: number) => ({ numRuns, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true });
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** No 5xx; every refusal is the envelope with a catalogued code whose status is the HTTP status. */
function wellFormed(r: TestResponse, what: string): void {
  assert.ok(r.status < 500, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  if (r.status >= 400) {
    const entry = ERROR_CATALOG[r.body?.code as keyof typeof ERROR_CATALOG];
    assert.ok(entry, `${what}: no catalogued code in ${r.text.slice(0, 200)}`);
    assert.equal(entry.status, r.status, `${what}: ${r.body.code}`);
  }
}

// Values a hostile or careless client sends for dates, numbers, cursors and text.
const dateArb = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 })).map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
  fc.constantFrom('0000-01-01', '9999-12-31', '1969-12-31', '2026-02-29', '2024-02-29', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2026-01-01T99:99Z', '2026-01-01T1.Z'),
);
const digitsArb = fc.integer({ min: 1, max: 22 }).chain((n) => fc.stringMatching(new RegExp(`^-?[0-9]{${n}}$`)));
const cursorArb = fc.oneof(
  fc.tuple(digitsArb, fc.stringMatching(/^[A-Za-z0-9_]{1,70}$/)).map(([t, id]) => b64(`${t}.${id}`)),
  fc.string({ maxLength: 60 }).map(b64),
  fc.string({ maxLength: 60 }),
);
const textArb = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom('%', '_', '\\', "'; --", '0x' + 'a'.repeat(64), '0x' + 'F'.repeat(40), ' '.repeat(5)));
// Boundary values of each type, drawn more often: the range ends where SQL types overflow.
const edgeArb = fc.constantFrom(
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '9999-12-31',
  '1900-02-29',
  '999999999999',
  '2147483648',
  '9223372036854775808',
  '-1',
  b64('9999999999999999999.ord_x'),
  b64('-9999999999999999999.ord_x'),
  b64('9223372036854775807.ord_x'),
  b64('0.x'),
);
const valueArb = fc.oneof(
  { arbitrary: edgeArb, weight: 3 },
  { arbitrary: dateArb, weight: 2 },
  { arbitrary: digitsArb, weight: 1 },
  { arbitrary: cursorArb, weight: 2 },
  { arbitrary: textArb, weight: 1 },
  { arbitrary: fc.constantFrom('', 'PAYMENT_CONFIRMED', 'DIRECT', 'USDC', '0', '100', '999'), weight: 1 },
);

for (const backend of backends()) {
  describe(`portal queries and card notifications under hostile input (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let p: PortalClient;
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
      const pw = await addPortalUser(s, m.merchantId, 'fuzz@portal.example');
      p = new PortalClient(s);
      assert.equal((await p.login('fuzz@portal.example', pw)).status, 200);
      for (let i = 0; i < 3; i++) assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() })).status, 402);
    });
    after(() => s?.close());

    test('the three 500s: a 19-digit cursor time, from=0000-01-01 on the list and both exports, a 12-digit chain id', async () => {
      const cursor = await p.call('GET', '/portal/api/orders', undefined, { query: { cursor: b64('9999999999999999999.ord_x') } });
      assert.equal(cursor.status, 400, cursor.text);
      assert.equal(cursor.body.param, 'cursor');
      const list = await p.call('GET', '/portal/api/orders', undefined, { query: { from: '0000-01-01' } });
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.orders.length, 3, 'from the start of time: every order');
      for (const kind of ['orders', 'payments']) {
        const csv = await p.call('GET', `/portal/api/exports/${kind}.csv`, undefined, { query: { from: '0000-01-01', to: '9999-12-31' } });
        assert.equal(csv.status, 200, `${kind}: ${csv.text}`);
      }
      assert.equal((await p.call('GET', `/portal/api/exports/orders.csv`, undefined, { query: { from: '0000-01-01', to: '0001-01-01' } })).status, 400, 'an empty range before any order');
      const chain = await p.call('GET', '/portal/api/orders', undefined, { query: { chain_id: '999999999999' } });
      assert.equal(chain.status, 200, chain.text);
      assert.deepEqual(chain.body.orders, []);
      const feb31 = await p.call('GET', '/portal/api/orders', undefined, { query: { from: '2026-02-31' } });
      assert.equal(feb31.status, 400, 'not a real day');
    });

    const QUERY_ROUTES = ROUTES.filter((r) => r.auth === 'portal' && r.method === 'GET' && r.querystring && !r.url.includes(':'));
    test(`property: any query of the ${QUERY_ROUTES.length} portal list/export routes answers without 5xx (${QUERY_RUNS} runs each)`, async () => {
      assert.ok(QUERY_ROUTES.length >= 5);
      const t0 = performance.now();
      for (const route of QUERY_ROUTES) {
        const keys = Object.keys((route.querystring as { properties: Record<string, unknown> }).properties);
        // One or two parameters at a time: with more, one invalid value (refused by the schema)
        // would hide what another one does to the handler.
        const queryArb = fc
          .uniqueArray(fc.oneof({ arbitrary: fc.constantFrom(...keys), weight: 9 }, { arbitrary: fc.string({ maxLength: 8 }), weight: 1 }), { maxLength: 2 })
          .chain((ks) => fc.tuple(...ks.map(() => valueArb)).map((vs) => Object.fromEntries(ks.map((k, i) => [k, vs[i]!]))));
        await fc.assert(
          fc.asyncProperty(queryArb, async (query) => wellFormed(await p.call('GET', route.url, undefined, { query }), `GET ${route.url} ${JSON.stringify(query)}`)),
          params(QUERY_RUNS),
        );
      }
      const ms = performance.now() - t0;
      console.log(`# portal query property: ${QUERY_ROUTES.length} routes × ${QUERY_RUNS} runs in ${Math.round(ms)} ms`);
    });

    const notify = (events: unknown[], raw?: string) => {
      const body = raw ?? JSON.stringify({ events });
      return s.request('POST', '/card/v1/notifications/test', { rawBody: body, headers: { 'x-tollgate-test-signature': signTestNotification(s.tg.deps.config.masterKey, body) } });
    };
    const cardState = async () => (await s.db.query('SELECT order_id, state, payment_reference, charges FROM card_payments ORDER BY order_id')).rows;
    const orderState = async () => (await s.db.query('SELECT id, status, payment_reference, held_reasons FROM orders ORDER BY id')).rows;

    test('a signed payment.succeeded whose payment_reference belongs to another order: 200, recorded, nothing changes', async () => {
      const a = await startCard(s, (await createCardSession(s, m)).checkout_id);
      const b = await startCard(s, (await createCardSession(s, m)).checkout_id);
      assert.equal(a.status, 200, a.text);
      const refA = (await s.db.query<{ payment_reference: string }>('SELECT payment_reference FROM card_payments WHERE order_id = $1', [a.body.order_id])).rows[0]!.payment_reference;
      const [cards, orders] = [await cardState(), await orderState()];
      const ev = { id: 'tev_conflict_1', type: 'payment.succeeded', order_id: b.body.order_id, payment_reference: refA, amount_minor: '950', currency: 'EUR', charge_id: 'tch_x', created: 1 };
      const r = await notify([ev]);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.outcomes, ['reference_conflict']);
      assert.deepEqual(await cardState(), cards);
      assert.deepEqual(await orderState(), orders);
      const { rows } = await s.db.query('SELECT order_id, outcome FROM card_events WHERE event_id = $1', ['tev_conflict_1']);
      assert.deepEqual(rows, [{ order_id: b.body.order_id, outcome: 'reference_conflict' }]);
      const again = await notify([ev]);
      assert.deepEqual(again.body.outcomes, ['duplicate'], 'the retry is recognised');
    });

    test('a signed payment.succeeded without amount or currency is held as a conflict, never invoiced', async () => {
      const started = await startCard(s, (await createCardSession(s, m)).checkout_id);
      assert.equal(started.status, 200, started.text);
      const id = started.body.order_id as string;
      const ref = (await s.db.query<{ payment_reference: string }>('SELECT payment_reference FROM card_payments WHERE order_id = $1', [id])).rows[0]!.payment_reference;
      const r = await notify([{ id: 'tev_noamount_1', type: 'payment.succeeded', order_id: id, payment_reference: ref, charge_id: 'tch_na', created: 1 }]);
      assert.equal(r.status, 200, r.text);
      const o = (await s.db.query<{ status: string; held_reasons: string[] }>('SELECT status, held_reasons FROM orders WHERE id = $1', [id])).rows[0]!;
      assert.equal(o.status, 'PAYMENT_CONFIRMED', 'paid but not fulfillable');
      assert.deepEqual(o.held_reasons, ['conflict']);
    });

    test('a signed refund larger than what was charged is recorded as amount_conflict and changes nothing', async () => {
      const started = await startCard(s, (await createCardSession(s, m)).checkout_id);
      const id = started.body.order_id as string;
      const { payment_reference: ref } = (await s.db.query<{ payment_reference: string }>('SELECT payment_reference FROM card_payments WHERE order_id = $1', [id])).rows[0]!;
      const { amount_wei: minor, fiat_currency: cur } = (await s.db.query<{ amount_wei: string; fiat_currency: string }>('SELECT amount_wei, fiat_currency FROM orders WHERE id = $1', [id])).rows[0]!;
      const paid = await notify([{ id: 'tev_paid_rf', type: 'payment.succeeded', order_id: id, payment_reference: ref, amount_minor: minor, currency: cur, charge_id: 'tch_rf', created: 1 }]);
      assert.deepEqual(paid.body.outcomes, ['succeeded']);
      const [cards, orders] = [await cardState(), await orderState()];
      const refunds = async () => (await s.db.query('SELECT id, amount, status FROM refunds WHERE order_id = $1 ORDER BY id', [id])).rows;
      const before = await refunds();
      const huge = await notify([{ id: 'tev_huge_rf', type: 'refund.succeeded', order_id: id, payment_reference: ref, refund_id: 'tre_huge', amount_minor: '999999999', currency: cur, created: 2 }]);
      const otherCurrency = await notify([{ id: 'tev_cur_rf', type: 'refund.succeeded', order_id: id, payment_reference: ref, refund_id: 'tre_cur', amount_minor: '1', currency: cur === 'USD' ? 'JPY' : 'USD', created: 3 }]);
      assert.deepEqual([huge.body.outcomes, otherCurrency.body.outcomes], [['amount_conflict'], ['amount_conflict']]);
      assert.deepEqual(await refunds(), before);
      assert.deepEqual(await cardState(), cards);
      assert.deepEqual(await orderState(), orders);
      const within = await notify([{ id: 'tev_ok_rf', type: 'refund.succeeded', order_id: id, payment_reference: ref, refund_id: 'tre_ok', amount_minor: '1', currency: cur, created: 4 }]);
      assert.deepEqual(within.body.outcomes, ['refunded'], 'a dashboard refund that fits is still recorded');
    });

    test(`property: signed notifications with hostile fields answer 200 or 400, never 5xx (${RUNS} runs)`, async () => {
      const started = await startCard(s, (await createCardSession(s, m)).checkout_id);
      const orderIds = (await s.db.query<{ order_id: string; payment_reference: string }>('SELECT order_id, payment_reference FROM card_payments')).rows;
      const str = fc.oneof(
        fc.constantFrom(...orderIds.flatMap((o) => [o.order_id, o.payment_reference]), started.body.order_id, 'ord_missing', 'tre_x', ''),
        fc.string({ maxLength: 30 }),
        fc.string({ unit: 'grapheme', maxLength: 10 }),
        fc.constantFrom('\u0000', 'a\u0000b', 'x'.repeat(300)),
      );
      const eventArb = fc.record(
        {
          id: fc.oneof(str, fc.integer()),
          type: fc.oneof(fc.constantFrom('payment.processing', 'payment.succeeded', 'payment.failed', 'refund.succeeded', 'refund.failed', 'dispute.opened', 'dispute.won', 'dispute.lost'), str),
          order_id: str,
          payment_reference: str,
          amount_minor: fc.oneof(digitsArb, str, fc.constant('99999999999999999999999999999')),
          currency: fc.oneof(fc.constantFrom('EUR', 'eur', 'USD'), str),
          charge_id: str,
          refund_id: str,
          decline_code: str,
          created: fc.oneof(fc.integer(), fc.double(), str),
        },
        { requiredKeys: ['id', 'type', 'payment_reference'] },
      );
      const t0 = performance.now();
      await fc.assert(
        fc.asyncProperty(fc.array(eventArb, { maxLength: 3 }), async (events) => {
          const r = await notify(events);
          assert.ok(r.status === 200 || r.status === 400, `${r.status} ${r.text.slice(0, 300)} for ${JSON.stringify(events).slice(0, 400)}`);
          wellFormed(r, 'notification');
        }),
        params(RUNS),
      );
      // unsigned or wrongly signed: 400 and nothing applied
      const before = await s.db.query('SELECT count(*)::int AS n FROM card_events');
      const bad = await s.request('POST', '/card/v1/notifications/test', { rawBody: JSON.stringify({ events: [] }), headers: { 'x-tollgate-test-signature': '0'.repeat(64) } });
      assert.equal(bad.status, 400);
      assert.deepEqual((await s.db.query('SELECT count(*)::int AS n FROM card_events')).rows, before.rows);
      console.log(`# card notification property: ${RUNS} runs in ${Math.round(performance.now() - t0)} ms`);
    });
  });
}
