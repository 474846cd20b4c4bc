import { Type } from '@sinclair/typebox';
import type { OrderRow } from '../../orders/repo.ts';
import type { OrderRowPart } from '../../orders/row-parts.ts';

/** The card rail's columns of an `orders` row (migration 0014): NULL on the orders of other rails. */
export interface CardOrderColumns {
  /** The currency charged (ISO 4217); set on every card order, so its presence tells a card order. */
  fiat_currency?: string | null;
  /** The amount charged, a decimal string. */
  fiat_amount?: string | null;
  /** The processor's payment reference. */
  payment_reference?: string | null;
  /** Why a paid card order is held in PAYMENT_CONFIRMED (states.ts HoldReason). */
  held_reasons?: string[] | null;
  dispute_status?: string | null;
}

/** An order as the card rail reads it: `SELECT *` returns its columns too. */
export type CardOrderRow = OrderRow & CardOrderColumns;

// The columns the card rail sets in a transition or patch (held_reasons takes a JSON string).
declare module '../../orders/repo.ts' {
  interface OrderPartPatch {
    payment_reference: string;
    held_reasons: string;
    dispute_status: string;
  }
}

/** The card rail's part of the order row and its status record (registered by main.ts). */
export const cardOrderRowPart: OrderRowPart = {
  name: 'card rail',
  columns: ['payment_reference', 'held_reasons', 'dispute_status'],
  properties: [
    { key: 'fiat_currency', after: 'observed_transfers', schema: Type.Optional(Type.String({ description: 'card orders: the currency charged (ISO 4217)' })) },
    { key: 'fiat_amount', after: 'fiat_currency', schema: Type.Optional(Type.String({ description: 'card orders: the amount charged, a decimal string' })) },
    { key: 'payment_reference', after: 'fiat_amount', schema: Type.Optional(Type.String({ description: "card orders: the processor's payment reference" })) },
    {
      key: 'held_reasons',
      after: 'payment_reference',
      schema: Type.Optional(
        Type.Array(Type.String(), {
          description: 'card orders: present while a paid card order is held in PAYMENT_CONFIRMED; each of duplicate_payment, conflict, refund, dispute, balance (docs/card-payments.md)',
        }),
      ),
    },
    { key: 'dispute_status', after: 'refunded_amount', schema: Type.Optional(Type.String({ description: 'card orders: opened, won or lost' })) },
  ],
  fieldsAfter: 'needs_reconciliation',
  fields(row) {
    const o = row as CardOrderRow;
    if (!o.fiat_currency) return {};
    const held = o.held_reasons ?? [];
    return {
      fiat_currency: o.fiat_currency,
      ...(o.fiat_amount ? { fiat_amount: o.fiat_amount } : {}),
      ...(o.payment_reference ? { payment_reference: o.payment_reference } : {}),
      ...(held.length ? { held_reasons: [...held] } : {}),
      ...(o.dispute_status ? { dispute_status: o.dispute_status } : {}),
    };
  },
  // A fiat amount keeps its minor digits ('9.50').
  shownFractionDigits: (row) => ((row as CardOrderRow).fiat_currency ? row.decimals : undefined),
};
