// The order status record assembled from the core and the rails' parts (orders/row-parts.ts
// OrderRowPart): where a part's properties land in the schema (the order of an HTTP response's
// fields) and its fields in the record object (the order of a webhook payload's), what start-up
// refuses, and that a part adds nothing to an order of another rail.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { allowPatchColumns, type OrderRow } from '../../src/orders/repo.ts';
import type { OrderRowPart } from '../../src/orders/row-parts.ts';
import { statusRecordWith } from '../../src/orders/views.ts';
import { cardOrderRowPart } from '../../src/rails/card/columns.ts';
import { delegateOrderRowPart } from '../../src/settlement/columns.ts';

const at = new Date(1_700_000_000_000);
const cryptoOrder = {
  id: 'ord_1',
  merchant_id: 'm_1',
  dapp_order_id: 'd1',
  flow: 'DIRECT_TRANSFER',
  chain_id: 1,
  pay_to_chain_id: 1,
  token_symbol: 'USDC',
  token_contract: '0xabc',
  decimals: 6,
  from_address: '0xf',
  pay_to_address: '0xp',
  amount_wei: '1000000',
  fee_amount: '10',
  status: 'INVOICED',
  expires_at: at,
  callback_calldata: null,
  checkout_id: 'cs_1',
  transfer_id: 1,
  tx_hash: '0xt',
  log_index: 0,
  block_number: 5,
  block_hash: '0xb',
  paid_amount_wei: '1000000',
  confirmations: 3,
  payment_seen_at: at,
  confirmed_at: at,
  invoiced_at: at,
  failure_reason: null,
  created_at: at,
  updated_at: at,
  refunded_amount: '250000',
  callback_id: null,
  settlement_tx_hash: null,
  // the rails' columns, NULL on a plain crypto order (`SELECT *` returns them)
  fiat_currency: null,
  fiat_amount: null,
  payment_reference: null,
  held_reasons: null,
  dispute_status: null,
  calldata_signature: null,
  callback_status: null,
  settled_at: null,
  refund_tx_hash: null,
} satisfies OrderRow & Record<string, unknown>;
const cardOrder = { ...cryptoOrder, flow: 'FIAT_TEST', decimals: 2, amount_wei: '950', refunded_amount: '100', fiat_currency: 'EUR', fiat_amount: '9.50', payment_reference: 'pi_1', held_reasons: ['dispute'], dispute_status: 'opened' };

const part = (name: string, properties: OrderRowPart['properties'], over: Partial<OrderRowPart> = {}): OrderRowPart => ({ name, columns: [], properties, fieldsAfter: 'checkout_id', fields: () => ({}), ...over });
const opt = Type.Optional(Type.String());

describe('status record parts', () => {
  it("places each part property right after the key it names, the core's or another part's", () => {
    const keys = Object.keys(statusRecordWith([delegateOrderRowPart, cardOrderRowPart]).properties);
    const tail = keys.slice(keys.indexOf('checkout_id'));
    assert.deepEqual(tail, [
      'checkout_id',
      'callback_status',
      'settlement_tx_hash',
      'settled_at',
      'refund_tx_hash',
      'needs_reconciliation',
      'observed_transfers',
      'fiat_currency',
      'fiat_amount',
      'payment_reference',
      'held_reasons',
      'refunded_amount',
      'dispute_status',
    ]);
    const a = part('a', [{ key: 'x', after: 'status', schema: opt }]);
    const b = part('b', [{ key: 'y', after: 'x', schema: opt }]);
    const both = Object.keys(statusRecordWith([a, b]).properties);
    assert.deepEqual(both.slice(both.indexOf('status'), both.indexOf('status') + 3), ['status', 'x', 'y']);
  });

  it('puts a part’s fields after the core field it names in the record object (webhook payload order)', () => {
    const rec = statusRecordWith([delegateOrderRowPart, cardOrderRowPart]).record({ ...cardOrder, settlement_tx_hash: '0xs' } as OrderRow);
    const keys = Object.keys(rec);
    assert.deepEqual(keys.slice(keys.indexOf('checkout_id')), ['checkout_id', 'settlement_tx_hash', 'fiat_currency', 'fiat_amount', 'payment_reference', 'held_reasons', 'dispute_status', 'refunded_amount']);
    // the card part keeps a fiat amount's minor digits; without it the refunded amount is shortest
    assert.equal(rec.refunded_amount, '1.00');
    assert.equal(statusRecordWith([]).record(cardOrder as OrderRow).refunded_amount, '1');
  });

  it('refuses at start-up two parts claiming the same key, a key of the core, an unknown anchor or a required property', () => {
    const a = part('a', [{ key: 'x', after: 'status', schema: opt }]);
    assert.throws(() => statusRecordWith([a, part('b', [{ key: 'x', after: 'flow', schema: opt }])]), /order row part b: status record property x is already defined by a/);
    assert.throws(() => statusRecordWith([part('c', [{ key: 'status', after: 'flow', schema: opt }])]), /property status is already defined by the core/);
    assert.throws(() => statusRecordWith([part('d', [{ key: 'z', after: 'nowhere', schema: opt }])]), /z follows nowhere/);
    assert.throws(() => statusRecordWith([part('e', [{ key: 'z', after: 'flow', schema: Type.String() }])]), /must be optional/);
    assert.throws(() => statusRecordWith([part('f', [], { fieldsAfter: 'nowhere' })]), /its fields follow nowhere/);
    assert.throws(() => statusRecordWith([delegateOrderRowPart, cardOrderRowPart, delegateOrderRowPart]), /callback_status is already defined by DELEGATE settlement/);
    // the columns a transition may set: a fixed allow-list, a column of the core (or of a part registered before) refused
    assert.throws(() => allowPatchColumns(['tx_hash']), /column tx_hash is already patchable/);
    assert.throws(() => allowPatchColumns(['x = 1; --']), /not a column name/);
  });

  it('gives nothing for an order outside its rail: a crypto order’s record is the core’s', () => {
    const row = cryptoOrder as OrderRow;
    assert.deepEqual(cardOrderRowPart.fields(row), {});
    assert.deepEqual(delegateOrderRowPart.fields(row), {});
    assert.equal(cardOrderRowPart.shownFractionDigits?.(row), undefined);
    // every core field, in the core's order (a late transfer adds needs_reconciliation and observed_transfers)
    const late = [{ tx_hash: '0xl', log_index: 1, block_number: 9, from_address: '0xf', amount_wei: '5', match_status: 'late', orphaned: false, accepted: false, confirmations: 2 }];
    const withParts = statusRecordWith([delegateOrderRowPart, cardOrderRowPart]).record(row, late);
    assert.equal(JSON.stringify(withParts), JSON.stringify(statusRecordWith([]).record(row, late)));
    assert.deepEqual(Object.keys(withParts).slice(-3), ['needs_reconciliation', 'refunded_amount', 'observed_transfers']);
    assert.equal(statusRecordWith([cardOrderRowPart]).record(row).refunded_amount, '0.25');
  });
});
