import type { Queryable } from '../../db/database.ts';
import type { CardOrderRow } from './columns.ts';
import type { CardPaymentState } from './states.ts';
import * as refunds from '../../refunds/repo.ts';
import type { NewRefund, RefundRow } from '../../refunds/repo.ts';

/**
 * SQL of the card rail: card orders (rows of `orders` without a chain, see migration 0014_card),
 * the processor-side payment state, applied notifications, refunds and reconciliation cursors.
 */

export interface CardPaymentRow {
  order_id: string;
  merchant_id: string;
  processor: string;
  state: CardPaymentState;
  payment_reference: string | null;
  redirect_url: string | null;
  decline_code: string | null;
  charge_id: string | null;
  charges: number;
  attempts: number;
  card_brand: string | null;
  card_last4: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A refund of a card order: a row of the one refunds model (refunds/repo.ts). */
export type CardRefundRow = RefundRow;

const ZERO_ADDRESS = `0x${'0'.repeat(40)}`;

export interface NewCardOrder {
  id: string;
  merchantId: string;
  dappOrderId: string;
  flow: string;
  currency: string;
  minorUnits: number;
  amountMinor: bigint;
  fiatAmount: string;
  feeAmount: bigint;
  expiresAt: Date;
  checkoutId: string | undefined;
  /** opaque per-order value (not a wallet): keeps orders_live_terms_key from pairing card orders */
  fromAddress: string;
}

/** Inserts a card order in CHECKOUT_VERIFIED and its processor row in `pending`, with the create audit row. */
export async function insertCardOrder(tx: Queryable, o: NewCardOrder, processor: string): Promise<CardOrderRow> {
  const { rows } = await tx.query<CardOrderRow>(
    `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
       from_address, pay_to_address, amount_wei, fee_amount, status, expires_at, checkout_id, fiat_currency, fiat_amount)
     VALUES ($1, $2, $3, $4, 0, 0, $5, $6, $7, $8, $6, $9, $10, 'CHECKOUT_VERIFIED', $11, $12, $5, $13)
     RETURNING *`,
    [o.id, o.merchantId, o.dappOrderId, o.flow, o.currency, ZERO_ADDRESS, o.minorUnits, o.fromAddress, o.amountMinor.toString(), o.feeAmount.toString(), o.expiresAt, o.checkoutId ?? null, o.fiatAmount],
  );
  await tx.query(
    `WITH t AS (INSERT INTO order_transitions (order_id, from_status, to_status, trigger) VALUES ($1, NULL, 'CHECKOUT_VERIFIED', 'create'))
     INSERT INTO card_payments (order_id, merchant_id, processor, state) VALUES ($1, $2, $3, 'pending')`,
    [o.id, o.merchantId, processor],
  );
  return rows[0]!;
}

export async function lockOrder(tx: Queryable, orderId: string): Promise<CardOrderRow | undefined> {
  const { rows } = await tx.query<CardOrderRow>('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
  return rows[0];
}

export async function orderByDappId(q: Queryable, merchantId: string, dappOrderId: string): Promise<CardOrderRow | undefined> {
  const { rows } = await q.query<CardOrderRow>('SELECT * FROM orders WHERE merchant_id = $1 AND dapp_order_id = $2', [merchantId, dappOrderId]);
  return rows[0];
}

export async function getCardPayment(q: Queryable, orderId: string): Promise<CardPaymentRow | undefined> {
  const { rows } = await q.query<CardPaymentRow>('SELECT * FROM card_payments WHERE order_id = $1', [orderId]);
  return rows[0];
}

export async function orderIdByReference(q: Queryable, processor: string, reference: string): Promise<string | undefined> {
  const { rows } = await q.query<{ order_id: string }>('SELECT order_id FROM card_payments WHERE processor = $1 AND payment_reference = $2', [processor, reference]);
  return rows[0]?.order_id;
}

export type CardPaymentPatch = Partial<Pick<CardPaymentRow, 'state' | 'payment_reference' | 'redirect_url' | 'decline_code' | 'charge_id' | 'charges' | 'attempts' | 'card_brand' | 'card_last4'>>;
const CARD_PATCHABLE = ['state', 'payment_reference', 'redirect_url', 'decline_code', 'charge_id', 'charges', 'attempts', 'card_brand', 'card_last4'] as const;

export async function updateCardPayment(q: Queryable, orderId: string, patch: CardPaymentPatch): Promise<void> {
  const params: unknown[] = [orderId];
  const sets = ['updated_at = now()'];
  for (const [k, v] of Object.entries(patch)) {
    if (!(CARD_PATCHABLE as readonly string[]).includes(k)) throw new Error(`card_payments.${k} is not patchable`);
    params.push(v);
    sets.push(`${k} = $${params.length}`);
  }
  await q.query(`UPDATE card_payments SET ${sets.join(', ')} WHERE order_id = $1`, params);
}

/** Records a notification; false when this processor event id was already applied. */
export async function recordCardEvent(tx: Queryable, e: { processor: string; eventId: string; type: string; orderId: string | undefined; outcome: string }): Promise<boolean> {
  const { rows } = await tx.query(
    `INSERT INTO card_events (processor, event_id, type, order_id, outcome) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (processor, event_id) DO NOTHING RETURNING 1`,
    [e.processor, e.eventId, e.type, e.orderId ?? null, e.outcome],
  );
  return rows.length === 1;
}

export async function setCardEventOutcome(tx: Queryable, processor: string, eventId: string, outcome: string): Promise<void> {
  await tx.query('UPDATE card_events SET outcome = $3 WHERE processor = $1 AND event_id = $2', [processor, eventId, outcome]);
}

/** Card refunds are rows of the one refunds model (rail `card`). */
export function insertRefund(tx: Queryable, r: Omit<NewRefund, 'rail'>): Promise<RefundRow> {
  return refunds.insertRefund(tx, { ...r, rail: 'card' });
}
export const { updateRefund, refundByProcessorId, listRefunds } = refunds;

export async function getCursor(q: Queryable, processor: string): Promise<string | undefined> {
  const { rows } = await q.query<{ cursor: string }>('SELECT cursor FROM card_cursors WHERE processor = $1', [processor]);
  return rows[0]?.cursor;
}

export async function setCursor(q: Queryable, processor: string, cursor: string): Promise<void> {
  await q.query(
    `INSERT INTO card_cursors (processor, cursor) VALUES ($1, $2)
     ON CONFLICT (processor) DO UPDATE SET cursor = excluded.cursor, updated_at = now()`,
    [processor, cursor],
  );
}

/** Live card orders past expiry whose payment is not under way (pending or declined). */
export async function listExpirableCardOrders(q: Queryable, now: Date, limit: number): Promise<{ id: string }[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT o.id FROM card_payments c JOIN orders o ON o.id = c.order_id
     WHERE c.state IN ('pending', 'declined') AND o.status = 'CHECKOUT_VERIFIED' AND o.expires_at <= $1
     ORDER BY o.expires_at LIMIT $2`,
    [now, limit],
  );
  return rows;
}
