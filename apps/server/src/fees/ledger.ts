import type { Queryable } from '../db/database.ts';

/**
 * Double-entry fee ledger. Each movement is one `fee_ledger` row moving an amount between two of a
 * merchant's accounts, plus the matching change of the materialized balances in `fee_accounts`,
 * always inside the caller's transaction:
 *
 *   top_up   external  → available   (operator credits the merchant)
 *   reserve  available → reserved    (order created)
 *   capture  reserved  → captured    (order invoiced: the fee is earned)
 *   release  reserved  → available   (order cancelled or expired)
 *   late_capture available → captured (an expired or cancelled order invoiced by an accepted late
 *                                      payment: its reserve was released, so the fee comes from
 *                                      the available balance)
 *
 * Amounts are bigint micro-units (6 decimals). Balances can never go negative: the UPDATE is
 * conditional and the table has CHECK constraints as a second line of defence.
 */
export interface FeeBalance {
  available: bigint;
  reserved: bigint;
  captured: bigint;
}

type Kind = 'top_up' | 'reserve' | 'capture' | 'release' | 'late_capture';
const MOVES: Record<Kind, { from: string; to: string }> = {
  top_up: { from: 'external', to: 'available' },
  reserve: { from: 'available', to: 'reserved' },
  capture: { from: 'reserved', to: 'captured' },
  release: { from: 'reserved', to: 'available' },
  late_capture: { from: 'available', to: 'captured' },
};

async function move(tx: Queryable, kind: Kind, merchantId: string, amount: bigint, orderId: string | null): Promise<boolean> {
  if (amount <= 0n) throw new RangeError(`fee ${kind} amount must be positive, got ${amount}`);
  const { from, to } = MOVES[kind];
  // Column names come from the fixed MOVES table above, never from input.
  const dec = from === 'external' ? '' : `${from} = ${from} - $2::numeric,`;
  const guard = from === 'external' ? '' : `AND ${from} >= $2::numeric`;
  const upd = await tx.query(`UPDATE fee_accounts SET ${dec} ${to} = ${to} + $2::numeric WHERE merchant_id = $1 ${guard}`, [merchantId, amount.toString()]);
  if (upd.rowCount !== 1) return false;
  await tx.query(`INSERT INTO fee_ledger (merchant_id, kind, from_account, to_account, amount, order_id) VALUES ($1, $2, $3, $4, $5, $6)`, [merchantId, kind, from, to, amount.toString(), orderId]);
  return true;
}

/** Opens the merchant's fee account (zero balances); idempotent. */
export async function openFeeAccount(tx: Queryable, merchantId: string): Promise<void> {
  await tx.query('INSERT INTO fee_accounts (merchant_id) VALUES ($1) ON CONFLICT (merchant_id) DO NOTHING', [merchantId]);
}

/** Credits the merchant's available balance. Returns false when the merchant has no account. */
export function topUpFees(tx: Queryable, merchantId: string, amount: bigint): Promise<boolean> {
  return move(tx, 'top_up', merchantId, amount, null);
}

/** Reserves the fee of an order. Returns false when the available balance is short. */
export function reserveFee(tx: Queryable, merchantId: string, orderId: string, amount: bigint): Promise<boolean> {
  return move(tx, 'reserve', merchantId, amount, orderId);
}

/** Captures an order's reserved fee (order invoiced). */
export function captureFee(tx: Queryable, merchantId: string, orderId: string, amount: bigint): Promise<boolean> {
  return move(tx, 'capture', merchantId, amount, orderId);
}

/** Captures the fee of an order whose reserve was released (accepted late payment). False when the available balance is short. */
export function lateCaptureFee(tx: Queryable, merchantId: string, orderId: string, amount: bigint): Promise<boolean> {
  return move(tx, 'late_capture', merchantId, amount, orderId);
}

/** Returns an order's reserved fee to the available balance (order cancelled or expired). */
export function releaseFee(tx: Queryable, merchantId: string, orderId: string, amount: bigint): Promise<boolean> {
  return move(tx, 'release', merchantId, amount, orderId);
}

export async function getFeeBalance(q: Queryable, merchantId: string): Promise<FeeBalance | undefined> {
  const { rows } = await q.query<{ available: string; reserved: string; captured: string }>('SELECT available, reserved, captured FROM fee_accounts WHERE merchant_id = $1', [merchantId]);
  const r = rows[0];
  return r && { available: BigInt(r.available), reserved: BigInt(r.reserved), captured: BigInt(r.captured) };
}

/**
 * Recomputes every balance from the ledger rows and compares with the materialized balances.
 * Returns the merchants whose books disagree (empty when the ledger balances). Used by tests and
 * by the reliability suite after each scenario.
 */
export async function findLedgerImbalances(q: Queryable): Promise<{ merchantId: string; account: string; ledger: string; balance: string }[]> {
  const { rows } = await q.query<{ merchant_id: string; account: string; ledger: string; balance: string }>(`
    WITH flows AS (
      SELECT merchant_id, to_account AS account, amount FROM fee_ledger
      UNION ALL
      SELECT merchant_id, from_account AS account, -amount FROM fee_ledger
    ), sums AS (
      SELECT merchant_id, account, sum(amount) AS total FROM flows WHERE account <> 'external' GROUP BY 1, 2
    ), balances AS (
      SELECT merchant_id, 'available' AS account, available AS balance FROM fee_accounts
      UNION ALL SELECT merchant_id, 'reserved', reserved FROM fee_accounts
      UNION ALL SELECT merchant_id, 'captured', captured FROM fee_accounts
    )
    SELECT b.merchant_id, b.account, coalesce(s.total, 0)::text AS ledger, b.balance::text AS balance
    FROM balances b LEFT JOIN sums s ON s.merchant_id = b.merchant_id AND s.account = b.account
    WHERE coalesce(s.total, 0) <> b.balance`);
  return rows.map((r) => ({ merchantId: r.merchant_id, account: r.account, ledger: r.ledger, balance: r.balance }));
}
