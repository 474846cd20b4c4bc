import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, PAYER } from '../helpers/orders.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { EXPORT_COLUMNS } from '../../src/portal/data/csv.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { CARD, setupCardMerchant } from './card-fixtures.ts';

/** RFC 4180 lines into objects keyed by the header. */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i] ?? ''])));
}

/**
 * The accounting exports (docs/portal.md "Exports") against the database: one column set in both
 * files; payments.csv holds every paid order of every rail (a quick-pay card order with its
 * processor reference and the payer's memo; a crypto order with its transaction), not the unpaid
 * one, and each refund as its own row (the refunded amount) with its own reference.
 */
for (const backend of backends()) {
  describe(`exports: every rail, refunds as rows (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let p: PortalClient;
    before(async () => {
      s = await startCheckoutServer(backend);
      m = await setupCardMerchant(s);
      const pw = await addPortalUser(s, m.merchantId, 'books@portal.example');
      p = new PortalClient(s);
      assert.equal((await p.login('books@portal.example', pw)).status, 200);
    });
    after(() => s?.close());

    it('payments.csv: card and crypto payments with their references, refunds as their own rows; orders.csv: every order, same columns', async () => {
      // a quick-pay card order, paid, then 2.00 refunded
      const prod = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Cup', price: '9.99', fiat_currency: 'EUR', fiat_amount: '9.50' } });
      const link = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: prod.body.product_id, payment_rails: 'crypto,card' } });
      const qs = await s.request('POST', `/quickpay/v1/links/${link.body.link_id}/sessions`, { body: { rail: 'card', memo: 'table 4, =SUM(1)' } });
      assert.equal(qs.status, 200, qs.text);
      const paid = await s.request('POST', `/quickpay/v1/sessions/${qs.body.session_id}/card/test-payment`, { body: { number: CARD.success, exp_month: 12, exp_year: 2099, cvc: '123' } });
      assert.equal(paid.body.order_status, 'INVOICED', paid.text);
      const cardOrder: string = qs.body.order_id;
      const rf = await s.signed(m, 'POST', `/api/v1/orders/${cardOrder}/refunds`, { body: { amount: '2.00' } });
      assert.equal(rf.status, 200, rf.text);

      // a crypto order paid by a recorded transfer (the watcher's writes, done here in SQL), then a DIRECT refund recorded
      const c = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: '1500000' }) });
      const cryptoOrder: string = c.body.order_id;
      const txHash = `0x${'ab'.repeat(32)}`;
      const { rows: t } = await s.db.query<{ id: string }>(
        `INSERT INTO chain_transfers (chain_id, token_contract, tx_hash, log_index, block_number, block_hash, block_timestamp, from_address, to_address, amount_wei, match_status, order_id)
         SELECT chain_id, token_contract, $2, 7, 42, $3, now(), from_address, pay_to_address, 1500000, 'matched', id FROM orders WHERE id = $1 RETURNING id`,
        [cryptoOrder, txHash, `0x${'cd'.repeat(32)}`],
      );
      await s.db.query(
        `UPDATE orders SET status = 'INVOICED', transfer_id = $2, tx_hash = $3, log_index = 7, block_number = 42, block_hash = $4, paid_amount_wei = 1500000,
           payment_seen_at = now(), confirmed_at = now(), invoiced_at = now(), confirmations = 4 WHERE id = $1`,
        [cryptoOrder, t[0]!.id, txHash, `0x${'cd'.repeat(32)}`],
      );
      const drf = await s.signed(m, 'POST', `/api/v1/orders/${cryptoOrder}/refunds`, { body: { amount: '0.5' } });
      assert.equal(drf.status, 200, drf.text);
      const unpaid = (await s.signed(m, 'GET', '/api/v1/orders/' + (await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() })).body.order_id)).body.order_id;

      const get = async (kind: string) => {
        const r = await p.call('GET', `/portal/api/exports/${kind}.csv`, undefined, { query: { from: '2000-01-01', to: '2999-01-01' } });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.text.split('\r\n')[0], EXPORT_COLUMNS.join(','), `${kind}: the one column set`);
        return parseCsv(r.text);
      };
      const pay = await get('payments');
      assert.deepEqual(
        pay.map((r) => [r.row_type, r.order_id]).sort(),
        [
          ['payment', cardOrder],
          ['payment', cryptoOrder],
          ['refund', cardOrder],
          ['refund', cryptoOrder],
        ].sort(),
      );
      assert.ok(!pay.some((r) => r.order_id === unpaid), 'an unpaid order is no payment');

      const {
        rows: [co],
      } = await s.db.query<{ payment_reference: string; amount_wei: string }>('SELECT payment_reference, amount_wei::text FROM orders WHERE id = $1', [cardOrder]);
      const {
        rows: [cr],
      } = await s.db.query<{ processor_refund_id: string; id: string }>('SELECT processor_refund_id, id FROM refunds WHERE order_id = $1', [cardOrder]);
      const card = pay.find((r) => r.row_type === 'payment' && r.order_id === cardOrder)!;
      assert.deepEqual(
        [card.rail, card.flow, card.currency, card.amount, card.amount_wei, card.paid_amount, card.fiat_amount, card.refunded_amount, card.processor, card.processor_reference, card.status],
        ['card', 'FIAT_TEST', 'EUR', '9.50', co!.amount_wei, '9.50', '9.50', '2.00', 'TEST', co!.payment_reference, 'INVOICED'],
      );
      assert.deepEqual([card.chain_id, card.token, card.payer, card.pay_to, card.tx_hash], ['', '', '', '', ''], 'no chain, fake payer or zero pay-to on a card row');
      assert.deepEqual([card.quickpay_session_id, card.payer_reference], [qs.body.session_id, "table 4, '=SUM(1)"]);
      const cardRefund = pay.find((r) => r.row_type === 'refund' && r.order_id === cardOrder)!;
      assert.deepEqual([cardRefund.refund_id, cardRefund.rail, cardRefund.amount, cardRefund.amount_wei, cardRefund.currency, cardRefund.status, cardRefund.processor_reference], [cr!.id, 'card', '2.00', '200', 'EUR', 'succeeded', cr!.processor_refund_id]);

      const crypto = pay.find((r) => r.row_type === 'payment' && r.order_id === cryptoOrder)!;
      assert.deepEqual(
        [crypto.rail, crypto.currency, crypto.token, crypto.amount, crypto.amount_wei, crypto.paid_amount, crypto.tx_hash, crypto.log_index, crypto.block_number, crypto.payer, crypto.pay_to, crypto.refunded_amount],
        ['direct', 'USDC', 'USDC', '1.5', '1500000', '1.5', txHash, '7', '42', PAYER.toLowerCase(), MERCHANT_WALLET, ''],
      );
      const cryptoRefund = pay.find((r) => r.row_type === 'refund' && r.order_id === cryptoOrder)!;
      assert.deepEqual([cryptoRefund.refund_id, cryptoRefund.rail, cryptoRefund.amount, cryptoRefund.amount_wei, cryptoRefund.status, cryptoRefund.tx_hash], [drf.body.refund_id, 'direct', '0.5', '500000', 'pending', '']);

      const orders = await get('orders');
      assert.deepEqual(
        orders.map((r) => r.row_type),
        orders.map(() => 'order'),
      );
      assert.ok([cardOrder, cryptoOrder, unpaid].every((id) => orders.some((r) => r.order_id === id)));
    });
  });
}
