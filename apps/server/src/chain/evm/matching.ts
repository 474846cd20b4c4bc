import type { Queryable } from '../../db/database.ts';
import { depthOf } from '../../orders/states.ts';
import * as orders from '../../orders/repo.ts';
import type { TransferLog } from './rpc.ts';

/**
 * Transfer attribution: which order, if any, a newly seen ERC-20 Transfer pays.
 *
 * The rule (decided with the orders owner; the pure part is `decideMatch`):
 *  1. Candidates are *live* orders: CHECKOUT_VERIFIED, no transfer yet, same chain, token contract,
 *     `pay_to_address = log.to` and `from_address = log.from`. The index `orders_live_terms_key`
 *     (migration 0005) makes this one lookup whatever the number of live orders. An order created more than
 *     CREATED_SKEW_MS after the block is no candidate: that transfer was made before the order
 *     existed (an unrelated payment, found while catching up after downtime), and paying an order
 *     with it would confirm an order nobody paid. The allowance covers clock skew between the
 *     chain and the gateway (block timestamps are whole seconds and may trail by a few).
 *  2. Among candidates with `amount_wei <= value` whose `expires_at` is not before the block's
 *     timestamp, the LARGEST `amount_wei` wins (best fit: a payer who pays 10 with orders of 5 and
 *     10 open meant the 10), ties → oldest. That is a `matched` transfer.
 *  3. When every candidate with `amount_wei <= value` had expired at the block's time, the transfer
 *     is `late` against the best fit among them: recorded, never confirming. (Expired-but-not-yet
 *     -swept orders must not shadow a live one, hence the two passes.)
 *  4. Else, when some candidate asks more than `value`, the transfer is `underpaid` against the
 *     oldest such candidate: recorded, never confirming.
 *  5. Else, when the payer paid the pay-to address of an EXPIRED or CANCELLED order created in the
 *     7 days before the block, it is `late` against the newest such order.
 *  6. Else `unmatched`.
 * Over-payment is a match (the surplus is the merchant's; `paid_amount_wei` records it). A second
 * payment for an order already paid finds no live candidate and is recorded by rules 5–6.
 */

/** What matching needs of a transfer. */
export interface TransferFacts {
  value: bigint;
  /** The block's timestamp. */
  blockTime: Date;
}

/** A live order that could be paid by the transfer (rule 1 already applied by SQL). */
export interface LiveCandidate {
  id: string;
  amountWei: bigint;
  expiresAt: Date;
  createdAt: Date;
}

/** An EXPIRED or CANCELLED order of the same payer, pay-to address and token (rule 5). */
export interface ClosedCandidate {
  id: string;
  createdAt: Date;
}

export type MatchDecision =
  | { kind: 'matched'; orderId: string }
  | { kind: 'late'; orderId: string }
  | { kind: 'underpaid'; orderId: string }
  | { kind: 'unmatched' };

/** How much older than its order a transfer's block may be and still pay it (rule 1: clock skew). */
export const CREATED_SKEW_MS = 120_000;

/** How far back rule 5 looks for a closed order to record a late payment against. */
export const LATE_LOOKBACK_MS = 7 * 24 * 3600 * 1000;

/**
 * The pure attribution rule (see the module comment). `closed` is only consulted when no live
 * candidate takes the transfer, so the caller may pass `[]` first and query closed orders only
 * for an `unmatched` answer.
 *
 * @example
 * const t = { value: 10n, blockTime: new Date('2025-01-01T00:00:00Z') };
 * const live = [
 *   { id: 'ord_a', amountWei: 5n, expiresAt: new Date('2025-01-01T00:10:00Z'), createdAt: new Date('2024-12-31T23:59:00Z') },
 *   { id: 'ord_b', amountWei: 10n, expiresAt: new Date('2025-01-01T00:10:00Z'), createdAt: new Date('2024-12-31T23:59:30Z') },
 * ];
 * decideMatch(t, live, []); // { kind: 'matched', orderId: 'ord_b' }
 */
export function decideMatch(t: TransferFacts, candidates: readonly LiveCandidate[], closed: readonly ClosedCandidate[]): MatchDecision {
  const live = candidates.filter((c) => c.createdAt.getTime() - CREATED_SKEW_MS <= t.blockTime.getTime());
  const fits = live.filter((c) => c.amountWei <= t.value);
  const onTime = fits.filter((c) => c.expiresAt.getTime() >= t.blockTime.getTime());
  const best = bestFit(onTime);
  if (best) return { kind: 'matched', orderId: best.id };
  const lateFit = bestFit(fits);
  if (lateFit) return { kind: 'late', orderId: lateFit.id };
  const asksMore = oldest(live.filter((c) => c.amountWei > t.value));
  if (asksMore) return { kind: 'underpaid', orderId: asksMore.id };
  const since = t.blockTime.getTime() - LATE_LOOKBACK_MS;
  const recent = closed.filter((c) => c.createdAt.getTime() >= since);
  const newest = [...recent].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))[0];
  if (newest) return { kind: 'late', orderId: newest.id };
  return { kind: 'unmatched' };
}

function bestFit<C extends LiveCandidate>(cs: readonly C[]): C | undefined {
  let best: C | undefined;
  for (const c of cs) {
    if (!best || c.amountWei > best.amountWei || (c.amountWei === best.amountWei && isOlder(c, best))) best = c;
  }
  return best;
}

function oldest<C extends LiveCandidate>(cs: readonly C[]): C | undefined {
  let o: C | undefined;
  for (const c of cs) if (!o || isOlder(c, o)) o = c;
  return o;
}

function isOlder(a: LiveCandidate, b: LiveCandidate): boolean {
  const d = a.createdAt.getTime() - b.createdAt.getTime();
  return d < 0 || (d === 0 && a.id < b.id);
}

/** A transfer just inserted into chain_transfers, about to be attributed. */
export interface NewTransfer extends TransferLog {
  id: number;
  chainId: number;
  blockTime: Date;
}

/**
 * Attributes one transfer inside the caller's (range) transaction: locks the candidate orders
 * (`FOR UPDATE`, so a concurrent watcher, the expiry sweeper or a cancel cannot move them
 * between the decision and the write), decides, records the outcome on the transfer row and, for
 * a match, sets the payment fields on the order. Returns the decision.
 *
 * A lost race on the order (its status changed although we held the lock) throws: the range
 * transaction rolls back and the next tick retries it, rather than recording a half-applied match.
 *
 * @example
 * const d = await attributeTransfer(tx, transfer, { head: 1234n, now: new Date() });
 * if (d.kind === 'matched') console.log('order', d.orderId, 'paid');
 */
export async function attributeTransfer(tx: Queryable, t: NewTransfer, ctx: { head: bigint; now: Date }): Promise<MatchDecision> {
  const { rows: liveRows } = await tx.query<{ id: string; amount_wei: string; expires_at: Date; created_at: Date }>(
    `SELECT id, amount_wei, expires_at, created_at FROM orders
      WHERE chain_id = $1 AND token_contract = $2 AND pay_to_address = $3 AND from_address = $4
        AND status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL
      ORDER BY created_at, id
      FOR UPDATE`,
    [t.chainId, t.token, t.to, t.from],
  );
  const live = liveRows.map((r) => ({ id: r.id, amountWei: BigInt(r.amount_wei), expiresAt: r.expires_at, createdAt: r.created_at }));
  const facts = { value: t.value, blockTime: t.blockTime };
  let decision = decideMatch(facts, live, []);
  if (decision.kind === 'unmatched') {
    const { rows: closedRows } = await tx.query<{ id: string; created_at: Date }>(
      `SELECT id, created_at FROM orders
        WHERE chain_id = $1 AND token_contract = $2 AND pay_to_address = $3 AND from_address = $4
          AND status IN ('EXPIRED', 'CANCELLED') AND created_at >= $5
        ORDER BY created_at DESC LIMIT 20`,
      [t.chainId, t.token, t.to, t.from, new Date(t.blockTime.getTime() - LATE_LOOKBACK_MS)],
    );
    decision = decideMatch(facts, live, closedRows.map((r) => ({ id: r.id, createdAt: r.created_at })));
  }

  const orderId = decision.kind === 'unmatched' ? null : decision.orderId;
  await tx.query('UPDATE chain_transfers SET match_status = $2, order_id = $3 WHERE id = $1', [t.id, decision.kind, orderId]);
  if (decision.kind === 'matched') {
    const row = await orders.patchOrder(tx, decision.orderId, 'CHECKOUT_VERIFIED', {
      transfer_id: t.id,
      tx_hash: t.txHash,
      log_index: t.logIndex,
      block_number: Number(t.blockNumber),
      block_hash: t.blockHash,
      paid_amount_wei: t.value.toString(),
      payment_seen_at: ctx.now,
      confirmations: depthOf(t.blockNumber, ctx.head),
    });
    if (!row) throw new Error(`order ${decision.orderId} left CHECKOUT_VERIFIED while locked for matching`);
  }
  return decision;
}
