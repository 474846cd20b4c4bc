import type { Queryable } from '../../db/database.ts';
import { claimForOrder, claimHolder, CHAIN_CLOCK_SKEW_MS, WHOLE_TX, type ClaimHolder } from '../../orders/claims.ts';
import { depthOf } from '../../orders/states.ts';
import * as orders from '../../orders/repo.ts';
import type { TransferLog } from './rpc.ts';
import { orderStatusRecord } from '../../orders/views.ts';
import { emitEvent } from '../../webhooks/outbox.ts';

/**
 * Transfer attribution: which order, if any, a newly seen ERC-20 Transfer pays or is recorded
 * against. docs/attribution.md states the rule for merchants; the pure part is `decideMatch`.
 *
 * Candidates are the orders with the transfer's chain, token contract, pay-to address
 * (`log.to`) and payer (`from_address = log.from`), in any state. An order created more than
 * CHAIN_CLOCK_SKEW_MS after the block is never a candidate: that transfer was made before the order
 * existed (found while catching up after downtime). The rule, first tier that applies wins:
 *
 *  1. EXACT amount, in any state (the payer used that order's terms, so it is the order meant):
 *     a live unpaid order whose `expires_at` is not before the block → `matched`; else a live
 *     unpaid order that had expired at the block's time → `late`; else a closed order (EXPIRED,
 *     CANCELLED, FAILED; newest first) → `late`; else an order already paid → `duplicate`. Late
 *     and duplicate payments are recorded against that order and never pay it (or any other); the
 *     merchant may accept a late one (orders/accept.ts).
 *  2. UNDER-PAYMENT WITHIN TOLERANCE: a live, on-time order asking more than the value by at most
 *     the merchant's `underpay_tolerance_bps` of its amount → `matched` (closest amount, then
 *     oldest). Before over-payment on purpose: a payer 0.5 % short of a 1.00 order meant that order,
 *     not a 0.50 order of the same payer that the value happens to cover.
 *  3. OVER-PAYMENT, only when no order matches exactly in any state: the live on-time order with
 *     the LARGEST amount below the value (best fit) → `matched`; else the best fit among live
 *     orders that had expired at the block's time → `late`.
 *  4. UNDER-PAYMENT beyond tolerance: the oldest live order asking more → `underpaid` (recorded,
 *     never paying; the merchant may accept it).
 *  5. A payment to a recently closed order (EXPIRED or CANCELLED, created in the LATE_LOOKBACK_MS
 *     before the block) with another amount → `late` against the newest such order.
 *  6. Else `unmatched`.
 * Ties (two live orders with identical terms) cannot happen: creation refuses them
 * (`orders_live_terms_key`); among closed or paid orders the newest wins, since its terms are the
 * ones the payer most recently saw.
 */

/** What matching needs of a transfer. */
export interface TransferFacts {
  value: bigint;
  /** The block's timestamp. */
  blockTime: Date;
}

/**
 * An order with the transfer's chain, token, pay-to address and payer. `state`: `open` =
 * CHECKOUT_VERIFIED with no payment seen; `paid` = a payment is seen, confirmed or invoiced;
 * `closed` = EXPIRED, CANCELLED or FAILED.
 */
export interface Candidate {
  id: string;
  amountWei: bigint;
  createdAt: Date;
  expiresAt: Date;
  state: 'open' | 'paid' | 'closed';
  /** The order's merchant's under-payment tolerance in basis points (0–1000). */
  toleranceBps: number;
}

export type MatchDecision = { kind: 'matched'; orderId: string } | { kind: 'late'; orderId: string } | { kind: 'underpaid'; orderId: string } | { kind: 'duplicate'; orderId: string } | { kind: 'unmatched' };

/**
 * What the watcher did with a transfer: the rule's decision, or `claimed` when another purpose
 * (a machine-payment challenge, an x402 settlement, a transaction the gateway sent) holds the
 * transfer in the claims ledger (orders/claims.ts): seen, recorded, never an order's payment.
 */
export type AttributionOutcome = MatchDecision | { kind: 'claimed'; holder: ClaimHolder };

export { CHAIN_CLOCK_SKEW_MS };

/** How far back tier 5 looks for a closed order to record a non-exact late payment against. */
export const LATE_LOOKBACK_MS = 7 * 24 * 3600 * 1000;

/**
 * Whether `value` pays `amount` under a tolerance of `bps` basis points: at least the amount, or
 * short of it by at most `amount * bps / 10000` (integer arithmetic, no rounding in the payer's
 * favour).
 *
 * @example
 * withinTolerance(995_000n, 1_000_000n, 50); // true: 0.5 % short, 0.5 % allowed
 * withinTolerance(994_999n, 1_000_000n, 50); // false
 */
export function withinTolerance(value: bigint, amount: bigint, bps: number): boolean {
  if (value >= amount) return true;
  return (amount - value) * 10_000n <= amount * BigInt(bps);
}

/**
 * The pure attribution rule (see the module comment). Candidates may repeat (the caller merges
 * several look-ups); the first occurrence of an id counts.
 *
 * @example
 * const t = { value: 1_000_000n, blockTime: new Date('2025-01-01T00:00:00Z') };
 * const base = { createdAt: new Date('2024-12-31T23:59:00Z'), expiresAt: new Date('2025-01-01T00:10:00Z'), toleranceBps: 0 };
 * decideMatch(t, [
 *   { ...base, id: 'ord_a', amountWei: 500_000n, state: 'open' },
 *   { ...base, id: 'ord_b', amountWei: 1_000_000n, state: 'closed' },
 * ]); // { kind: 'late', orderId: 'ord_b' }: the exact terms of B, never an over-payment of A
 */
export function decideMatch(t: TransferFacts, candidates: readonly Candidate[]): MatchDecision {
  const seen = new Set<string>();
  const block = t.blockTime.getTime();
  const cs = candidates.filter((c) => {
    if (seen.has(c.id)) return false;
    seen.add(c.id);
    return c.createdAt.getTime() - CHAIN_CLOCK_SKEW_MS <= block;
  });
  const onTime = (c: Candidate) => c.expiresAt.getTime() >= block;
  const open = cs.filter((c) => c.state === 'open');

  // 1. Exact amount, any state.
  const exact = cs.filter((c) => c.amountWei === t.value);
  const e1 = oldest(exact.filter((c) => c.state === 'open' && onTime(c)));
  if (e1) return { kind: 'matched', orderId: e1.id };
  const e2 = oldest(exact.filter((c) => c.state === 'open'));
  if (e2) return { kind: 'late', orderId: e2.id };
  const e3 = newest(exact.filter((c) => c.state === 'closed'));
  if (e3) return { kind: 'late', orderId: e3.id };
  const e4 = newest(exact.filter((c) => c.state === 'paid'));
  if (e4) return { kind: 'duplicate', orderId: e4.id };

  // 2. Short by no more than the merchant's tolerance: the closest amount.
  const tolerated = open.filter((c) => onTime(c) && c.amountWei > t.value && withinTolerance(t.value, c.amountWei, c.toleranceBps));
  const tol = pick(tolerated, (a, b) => a.amountWei < b.amountWei);
  if (tol) return { kind: 'matched', orderId: tol.id };

  // 3. Over-payment: the largest amount below the value.
  const fits = open.filter((c) => c.amountWei < t.value);
  const best = pick(fits.filter(onTime), (a, b) => a.amountWei > b.amountWei);
  if (best) return { kind: 'matched', orderId: best.id };
  const lateFit = pick(fits, (a, b) => a.amountWei > b.amountWei);
  if (lateFit) return { kind: 'late', orderId: lateFit.id };

  // 4. Under-payment.
  const asksMore = oldest(open.filter((c) => c.amountWei > t.value));
  if (asksMore) return { kind: 'underpaid', orderId: asksMore.id };

  // 5. Another amount to a recently closed order.
  const since = block - LATE_LOOKBACK_MS;
  const recent = newest(cs.filter((c) => c.state === 'closed' && c.createdAt.getTime() >= since));
  if (recent) return { kind: 'late', orderId: recent.id };
  return { kind: 'unmatched' };
}

/** The candidate `better` ranks first; equal ranks go to the oldest (then the smallest id). */
function pick(cs: readonly Candidate[], better: (a: Candidate, b: Candidate) => boolean): Candidate | undefined {
  let best: Candidate | undefined;
  for (const c of cs) {
    if (!best || better(c, best) || (!better(best, c) && isOlder(c, best))) best = c;
  }
  return best;
}

function oldest(cs: readonly Candidate[]): Candidate | undefined {
  return pick(cs, () => false);
}

function newest(cs: readonly Candidate[]): Candidate | undefined {
  let n: Candidate | undefined;
  for (const c of cs) if (!n || isOlder(n, c)) n = c;
  return n;
}

function isOlder(a: Candidate, b: Candidate): boolean {
  const d = a.createdAt.getTime() - b.createdAt.getTime();
  return d < 0 || (d === 0 && a.id < b.id);
}

/** A transfer just inserted into chain_transfers, about to be attributed. */
export interface NewTransfer extends TransferLog {
  id: number;
  chainId: number;
  blockTime: Date;
  /** A revived (orphaned, then canonical again) row: the order it was recorded against before. */
  priorOrderId?: string | null | undefined;
}

/**
 * Attributes one transfer inside the caller's (range) transaction: locks the live candidate orders
 * (`FOR UPDATE`, so a concurrent watcher, the expiry sweeper or a cancel cannot move them
 * between the decision and the write), decides, records the outcome on the transfer row and, for
 * a match, sets the payment fields on the order. A late, under- or duplicate payment emits its
 * webhook event (outbox, same transaction). Returns the decision.
 *
 * Look-ups, cheapest first: live orders (one probe of `orders_live_terms_key`, which also yields
 * the common case, an exact on-time match, with no further query); orders of every other state
 * with exactly the value (`orders_settled_terms_idx`); recently closed orders only when nothing
 * else applies.
 *
 * A lost race on the order (its status changed although we held the lock) throws: the range
 * transaction rolls back and the next tick retries it, rather than recording a half-applied match.
 *
 * @example
 * const d = await attributeTransfer(tx, transfer, { head: 1234n, now: new Date() });
 * if (d.kind === 'matched') console.log('order', d.orderId, 'paid');
 */
export async function attributeTransfer(tx: Queryable, t: NewTransfer, ctx: { head: bigint; now: Date }): Promise<AttributionOutcome> {
  const key = { chainId: t.chainId, txRef: t.txHash, index: t.logIndex };
  const held = await claimHolder(tx, key);
  // Attribution goes on only for a transfer no other purpose holds: unclaimed, revived from the
  // order that claimed it, or in a transaction the gateway sent for an order (a relayed
  // authorization: it may pay that order and no other, which claimForOrder enforces).
  const mayAttribute = !held || (held.purpose === 'order' && (held.index === WHOLE_TX || (held.index === t.logIndex && held.purposeId === t.priorOrderId)));
  if (!mayAttribute) return recordClaimed(tx, t.id, held);
  if (t.priorOrderId) {
    // Still the payment of the order it was recorded against (an INVOICED order keeps its payment
    // through a reorg): it is that order's again, never a payment of another order.
    const { rows } = await tx.query<{ transfer_id: number | string | null }>('SELECT transfer_id FROM orders WHERE id = $1', [t.priorOrderId]);
    if (rows[0] && rows[0].transfer_id !== null && Number(rows[0].transfer_id) === t.id) {
      const c = await claimForOrder(tx, key, { orderId: t.priorOrderId, amountWei: t.value, payer: t.from });
      if (c !== 'claimed') return recordClaimed(tx, t.id, c);
      await tx.query(`UPDATE chain_transfers SET match_status = 'matched', order_id = $2 WHERE id = $1`, [t.id, t.priorOrderId]);
      return { kind: 'matched', orderId: t.priorOrderId };
    }
  }
  type Row = { id: string; amount_wei: string; expires_at: Date; created_at: Date; status: string; transfer_id: number | null; underpay_tolerance_bps: number };
  const terms = [t.chainId, t.token, t.to, t.from];
  const { rows: liveRows } = await tx.query<Row>(
    `SELECT o.id, o.amount_wei, o.expires_at, o.created_at, o.status, o.transfer_id, m.underpay_tolerance_bps
       FROM orders o JOIN merchants m ON m.id = o.merchant_id
      WHERE o.chain_id = $1 AND o.token_contract = $2 AND o.pay_to_address = $3 AND o.from_address = $4
        AND o.status = 'CHECKOUT_VERIFIED'
      ORDER BY o.created_at, o.id
      FOR UPDATE OF o`,
    terms,
  );
  const toCandidate = (r: Row): Candidate => ({
    id: r.id,
    amountWei: BigInt(r.amount_wei),
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    state: r.status === 'CHECKOUT_VERIFIED' ? (r.transfer_id === null ? 'open' : 'paid') : r.status === 'PAYMENT_CONFIRMED' || r.status === 'INVOICED' ? 'paid' : 'closed',
    toleranceBps: r.underpay_tolerance_bps ?? 0,
  });
  const facts = { value: t.value, blockTime: t.blockTime };
  const candidates = liveRows.map(toCandidate);
  let decision = decideMatch(facts, candidates);
  const exactOnTimeLive = decision.kind === 'matched' && candidates.some((c) => c.id === (decision as { orderId: string }).orderId && c.amountWei === t.value);
  if (!exactOnTimeLive) {
    // Exact terms of an order in any other state: they outrank every non-exact live candidate.
    const { rows } = await tx.query<Row>(
      `SELECT id, amount_wei, expires_at, created_at, status, transfer_id, 0 AS underpay_tolerance_bps FROM orders
        WHERE chain_id = $1 AND token_contract = $2 AND pay_to_address = $3 AND from_address = $4 AND amount_wei = $5
          AND status <> 'CHECKOUT_VERIFIED'
        ORDER BY created_at DESC, id DESC LIMIT 20`,
      [...terms, t.value.toString()],
    );
    candidates.push(...rows.map(toCandidate));
    decision = decideMatch(facts, candidates);
  }
  if (decision.kind === 'unmatched') {
    const { rows } = await tx.query<Row>(
      `SELECT id, amount_wei, expires_at, created_at, status, transfer_id, 0 AS underpay_tolerance_bps FROM orders
        WHERE chain_id = $1 AND token_contract = $2 AND pay_to_address = $3 AND from_address = $4
          AND status IN ('EXPIRED', 'CANCELLED') AND created_at >= $5
        ORDER BY created_at DESC, id DESC LIMIT 20`,
      [...terms, new Date(t.blockTime.getTime() - LATE_LOOKBACK_MS)],
    );
    candidates.push(...rows.map(toCandidate));
    decision = decideMatch(facts, candidates);
  }

  const decided = decision;
  const exactOnTime = decided.kind === 'matched' && candidates.some((c) => c.id === decided.orderId && c.amountWei === t.value);
  if (decided.kind !== 'unmatched' && !exactOnTime) {
    // Precedence (docs/attribution.md): a challenge issued to this payer that the transfer pays
    // outranks every order claim but an exact, on-time one. Left unclaimed for its verify.
    if (await openChallengeFits(tx, t)) decision = { kind: 'unmatched' };
  }
  const orderId = decision.kind === 'unmatched' ? null : decision.orderId;
  if (orderId !== null) {
    const c = await claimForOrder(tx, key, { orderId, amountWei: t.value, payer: t.from });
    if (c !== 'claimed') return recordClaimed(tx, t.id, c);
  }
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
  } else if (decision.kind !== 'unmatched') {
    await emitRecordedPayment(tx, decision, t, ctx);
  }
  return decision;
}

/** A transfer another purpose holds: recorded as seen, against no order, with no event. */
async function recordClaimed(tx: Queryable, id: number, holder: ClaimHolder): Promise<AttributionOutcome> {
  await tx.query(`UPDATE chain_transfers SET match_status = 'claimed', order_id = NULL WHERE id = $1`, [id]);
  return { kind: 'claimed', holder };
}

/**
 * Whether an OPEN machine-payment challenge issued to this transfer's payer is paid by it (what
 * its verify would accept: same chain, token and recipient, at least the price, mined inside the
 * challenge's lifetime, less the chain's clock skew). Challenges without a named payer do not count: anybody can open one for
 * any price, and they must not be able to keep payments away from orders.
 */
async function openChallengeFits(tx: Queryable, t: NewTransfer): Promise<boolean> {
  const { rows } = await tx.query(
    `SELECT 1 FROM mpp_challenges
      WHERE status = 'OPEN' AND chain_id = $1 AND recipient = $2 AND payer_addr = $3 AND token_contract = $4
        AND amount_wei <= $5 AND date_trunc('second', issued_at) <= $7 AND expires_at >= $6 LIMIT 1`,
    // The verify's window (mpp/verify.ts judge): a block may be stamped up to CHAIN_CLOCK_SKEW_MS
    // before the challenge it pays, as a chain's clock may trail ours.
    [t.chainId, t.to, t.from, t.token, t.value.toString(), t.blockTime, new Date(t.blockTime.getTime() + CHAIN_CLOCK_SKEW_MS)],
  );
  return rows.length > 0;
}

const RECORDED_EVENT = { late: 'order.late_payment', underpaid: 'order.underpaid', duplicate: 'order.duplicate_payment' } as const;

/**
 * The webhook event of a payment recorded against an order without paying it: the order status
 * record plus the transfer, so the merchant can reconcile (accept, refund) without a second read.
 * Exported for the Solana watcher, which records the same kinds of payments.
 */
export async function emitRecordedPayment(tx: Queryable, d: { kind: 'late' | 'underpaid' | 'duplicate'; orderId: string }, t: Pick<NewTransfer, 'txHash' | 'logIndex' | 'blockNumber' | 'from' | 'value'>, ctx: { head: bigint; now: Date }) {
  const order = await orders.getOrder(tx, d.orderId);
  if (!order) throw new Error(`order ${d.orderId} vanished while recording a payment against it`);
  const transfer = {
    tx_hash: t.txHash,
    log_index: t.logIndex,
    block_number: Number(t.blockNumber),
    from_address: t.from,
    amount_wei: t.value.toString(),
    kind: d.kind,
    orphaned: false,
    accepted: false,
    confirmations: depthOf(t.blockNumber, ctx.head),
  };
  const payload = { ...orderStatusRecord(order), needs_reconciliation: true, transfer };
  await emitEvent(tx, { merchantId: order.merchant_id, event: RECORDED_EVENT[d.kind], payload, orderId: order.id, clockNow: ctx.now });
}
