import { CHECK_VIOLATION, DEADLOCK_DETECTED, isPgError, pgConstraint, type Database, type Queryable } from '../db/database.ts';
import type { OrderPorts } from './ports.ts';
import * as repo from './repo.ts';
import { transitionOrder } from './transition.ts';

/**
 * Live-terms clashes (`orders_live_terms_key`: one live order per chain, pay-to address, token,
 * payer and amount, since no transfer could tell two apart — docs/attribution.md).
 *
 * A payer who leaves a checkout or quick-pay session unpaid and comes back through a new session
 * with the same price asks for the same terms again. Their earlier attempt must not lock them out,
 * so a session's order SUPERSEDES the live order blocking it when that order is
 *  - of the same merchant,
 *  - itself made by a checkout session (other than the new one) or a session of a module built on
 *    orders (quick-pay; ports.ts sessionOrder) — never an order the merchant created through the
 *    API, whose lifecycle only the merchant decides,
 *  - unpaid: no transfer attributed or recorded against it (not even a short one, which a quick-pay
 *    session may still sum up: quickpay/partial.ts), no payment seen, no settlement sent.
 * The earlier order moves to EXPIRED (trigger `supersede`, through transitionOrder: audit row, fee
 * released, `order.expired`, session sync) in the same transaction that creates the new one, under
 * the earlier order's row lock: either both happen or neither, and of two racing creations the
 * second waits, finds the first one's order live and supersedes that one in turn (one live order).
 * A payment later made with those terms follows the attribution rule: while the new order is live
 * it pays the new one; once that one is paid, it is recorded `late` against the superseded one.
 */

/** The live order a new order's terms clash with, and whether a session order may supersede it. */
export interface Blocker {
  id: string;
  merchant_id: string;
  expires_at: Date;
  supersedable: boolean;
}

/** What supersede asks of the modules built on orders (ports.ts). */
export type SupersedePorts = Pick<OrderPorts, 'flowsOutsideLiveTerms' | 'sessionOrder'>;

/**
 * The live order with `o`'s terms (at most one: the unique index), locked when `lock`. The pay-to
 * address is the one the creating statement uses: the DELEGATE override, else the merchant's
 * wallet for the chain and token. Orders of flows outside live terms (ports.ts) clash with none.
 * The statement decides what the core knows (same merchant, unpaid, made by another checkout
 * session); whether an order of another kind of session is one, its module answers (ports.ts
 * sessionOrder), asked only when that is all that is left to decide.
 */
export async function liveTermsBlocker(q: Queryable, o: repo.OrderToCreate, lock: boolean, ports: SupersedePorts): Promise<Blocker | undefined> {
  const { rows } = await q.query<Omit<Blocker, 'supersedable'> & { dapp_order_id: string; unpaid: boolean; other_checkout: boolean }>(
    `SELECT o.id, o.merchant_id, o.dapp_order_id, o.expires_at,
       (o.merchant_id = $3 AND o.transfer_id IS NULL AND o.payment_seen_at IS NULL AND o.settlement_tx_hash IS NULL
        AND NOT EXISTS (SELECT 1 FROM chain_transfers t WHERE t.order_id = o.id AND t.orphaned_at IS NULL)) AS unpaid,
       (o.checkout_id IS NOT NULL AND o.checkout_id IS DISTINCT FROM $8) AS other_checkout
     FROM orders o
     WHERE o.chain_id = $1 AND o.token_contract = $5 AND o.from_address = $6 AND o.amount_wei = $7::numeric AND o.status = 'CHECKOUT_VERIFIED'
       AND NOT (o.flow = ANY($9::text[]))
       AND o.pay_to_address = coalesce($2, (SELECT w.address FROM merchant_wallets w WHERE w.merchant_id = $3 AND w.chain_id = $1 AND w.token_symbol = $4))
     ${lock ? 'FOR UPDATE OF o' : ''}`,
    [o.chainId, o.payToAddress ?? null, o.merchantId, o.tokenSymbol, o.tokenContract, o.fromAddress, o.amountWei.toString(), o.checkoutId ?? null, ports.flowsOutsideLiveTerms()],
  );
  const r = rows[0];
  if (!r) return undefined;
  const supersedable = r.unpaid && (r.other_checkout || ((await ports.sessionOrder?.(q, r)) ?? false));
  return { id: r.id, merchant_id: r.merchant_id, expires_at: r.expires_at, supersedable };
}

export type SupersedeResult =
  | { kind: 'created'; order: repo.CreatedOrder; superseded: string }
  /** the blocking order is not one a session may supersede */
  | { kind: 'blocked'; blocker: Blocker }
  /** nothing blocks any more, or the transaction lost a race (deadlock): create again */
  | { kind: 'retry' }
  /** the new order was refused for another reason; nothing changed (the supersede rolled back) */
  | { kind: 'refused'; missing: Exclude<repo.CreateRowOutcome, { order: unknown }>['missing'] };

class Rollback extends Error {
  readonly missing: Exclude<repo.CreateRowOutcome, { order: unknown }>['missing'];
  constructor(missing: Exclude<repo.CreateRowOutcome, { order: unknown }>['missing']) {
    super('rolled back');
    this.missing = missing;
  }
}

/**
 * Creates session order `o` in place of the live unpaid session order whose terms it repeats, in
 * one transaction (see the top of this file). The new order goes through the same statement as
 * every creation (orders/repo.ts insertOrdersReservingFee), so its fee is reserved as usual — out
 * of the balance the superseded order's release just made available.
 */
export async function createSuperseding(db: Database, o: repo.OrderToCreate, now: Date, ports: SupersedePorts): Promise<SupersedeResult> {
  try {
    return await db.transaction(async (tx): Promise<SupersedeResult> => {
      const b = await liveTermsBlocker(tx, o, true, ports);
      if (!b) return { kind: 'retry' };
      if (!b.supersedable) return { kind: 'blocked', blocker: b };
      const moved = await transitionOrder(tx, { orderId: b.id, from: 'CHECKOUT_VERIFIED', trigger: 'supersede', detail: { superseded_by: o.id }, now });
      if (!moved) return { kind: 'retry' };
      const row = (await repo.insertOrdersReservingFee(tx, [o]))[0]!;
      if (!('order' in row)) throw new Rollback(row.missing);
      return { kind: 'created', order: row.order, superseded: b.id };
    });
  } catch (err) {
    if (err instanceof Rollback) return { kind: 'refused', missing: err.missing };
    if (isPgError(err, CHECK_VIOLATION) && pgConstraint(err) === repo.FEE_AVAILABLE_CHECK) return { kind: 'refused', missing: 'fee_short' };
    // Two creations locking each other's rows (a group-committed batch holds the fee row and waits
    // for this transaction's order): Postgres aborted this one, nothing of it was written.
    if (isPgError(err, DEADLOCK_DETECTED)) return { kind: 'retry' };
    throw err;
  }
}
