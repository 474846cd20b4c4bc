import { Type } from '@sinclair/typebox';
import type { OrderRow } from '../orders/repo.ts';
import type { OrderRowPart } from '../orders/row-parts.ts';

/**
 * DELEGATE mode's columns of an `orders` row (migration 0009; EVM settlement here, Solana's in
 * chain/solana/delegate/): NULL on other orders. The settlement transaction itself
 * (`settlement_tx_hash`) and the callback registration (`callback_id`) are the core's: expiry,
 * cancel and order creation need them.
 */
export interface DelegateOrderColumns {
  calldata_signature: string | null;
  callback_status: 'pending' | 'succeeded' | 'failed' | null;
  /** When the settlement transaction reached finality. */
  settled_at: Date | null;
  /** The operator refund of a FAILED order to its payer. */
  refund_tx_hash: string | null;
}

// The columns DELEGATE settlement (EVM and Solana) sets in a transition or patch.
declare module '../orders/repo.ts' {
  interface OrderPartPatch {
    callback_status: 'pending' | 'succeeded' | 'failed';
    settled_at: Date;
    refund_tx_hash: string;
  }
}

const opt = <T>(k: string, v: T | null | undefined) => (v === null || v === undefined ? {} : { [k]: v });

/** DELEGATE mode's part of the order row and its status record (registered by main.ts). */
export const delegateOrderRowPart: OrderRowPart = {
  name: 'DELEGATE settlement',
  columns: ['callback_status', 'settled_at', 'refund_tx_hash'],
  properties: [
    { key: 'callback_status', after: 'checkout_id', schema: Type.Optional(Type.String({ description: 'DELEGATE: pending | succeeded | failed' })) },
    { key: 'settlement_tx_hash', after: 'callback_status', schema: Type.Optional(Type.String({ description: 'DELEGATE: the settlement transaction (payout and callback in one transaction)' })) },
    { key: 'settled_at', after: 'settlement_tx_hash', schema: Type.Optional(Type.String({ description: 'DELEGATE: when the settlement transaction reached finality' })) },
    { key: 'refund_tx_hash', after: 'settled_at', schema: Type.Optional(Type.String({ description: 'DELEGATE: the operator refund of a FAILED order to its payer' })) },
  ],
  fieldsAfter: 'checkout_id',
  fields(row) {
    // `SELECT *` returns DELEGATE's columns with the row.
    const o = row as OrderRow & DelegateOrderColumns;
    return {
      ...opt('callback_status', o.callback_status),
      ...opt('settlement_tx_hash', o.settlement_tx_hash),
      ...opt('settled_at', o.settled_at?.toISOString()),
      ...opt('refund_tx_hash', o.refund_tx_hash),
    };
  },
};
