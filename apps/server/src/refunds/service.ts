import { formatUnits, newId, parseDecimal, type ErrorCode } from '@tollgate/protocol';
import type { Database } from '../db/database.ts';
import type { OrderRow } from '../orders/repo.ts';
import { isCardFlow } from '../rails/card/port.ts';
import type { CardService } from '../rails/card/service.ts';
import type { DelegateService } from '../settlement/delegate.ts';
import { delegateFlowNamed } from '../settlement/flows/index.ts';
import * as repo from './repo.ts';
import { refundRecord, type RefundRecord } from './views.ts';

export type RefundRequestOutcome = { kind: 'refund'; refund: RefundRecord } | { kind: 'not_found' } | { kind: 'refused'; code: ErrorCode; message: string; param?: string | undefined };

export interface RefundRequest {
  merchantId: string;
  orderId: string;
  /** decimal string in the order's currency or token; default: all that remains */
  amount?: string | undefined;
  reason?: string | undefined;
}

/** What the refund paths need: the card rail (processor refunds) and DELEGATE mode (executor refunds). */
export interface RefundDeps {
  db: Database;
  cards: CardService;
  delegate: DelegateService;
}

const refused = (code: ErrorCode, message: string, param?: string): RefundRequestOutcome => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

/** Orders the merchant may record a DIRECT refund of: paid by a transfer to the merchant's wallet. */
const DIRECT_REFUNDABLE = new Set(['PAYMENT_CONFIRMED', 'INVOICED']);

/**
 * A merchant's refund of one of its orders, by rail (docs/refunds.md):
 *  - card orders: through the card processor (rails/card/service.ts);
 *  - DELEGATE orders: the operator's executor returns a FAILED order's pooled funds, under the
 *    checks of the operator's route (settlement/delegate.ts); always the whole payment;
 *  - EVM DIRECT orders: recorded here as `pending`; the merchant sends the tokens from the wallet
 *    that was paid to the payer, and the watcher links that transfer (refunds/watch.ts).
 * Every path locks the order row and sums its live refunds in the same transaction, so concurrent
 * requests never refund more than was paid.
 */
export async function requestRefund(deps: RefundDeps, req: RefundRequest): Promise<RefundRequestOutcome> {
  const order = (await deps.db.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [req.orderId])).rows[0];
  if (!order || order.merchant_id !== req.merchantId) return { kind: 'not_found' };
  if (isCardFlow(order.flow)) {
    const out = await deps.cards.refund({ merchantId: req.merchantId, orderId: req.orderId, amount: req.amount, reason: req.reason, by: 'merchant' });
    if (out.kind !== 'refunded') return out.kind === 'not_found' ? out : refused(out.code, out.message, out.param);
    return { kind: 'refund', refund: refundRecord(out.refund, out.order) };
  }
  if (delegateFlowNamed(order.flow)) {
    if (req.amount !== undefined && !sameAmount(req.amount, order)) {
      return refused('partial_refund_not_supported', `a DELEGATE refund returns the whole payment (${formatUnits(paidOf(order), order.decimals)} ${order.token_symbol}); omit amount`, 'amount');
    }
    const out = await deps.delegate.refund(req.orderId, { merchantId: req.merchantId, reason: req.reason });
    if (out.kind === 'order_not_found') return { kind: 'not_found' };
    if (out.kind === 'not_refundable') return refused('order_not_refundable', out.reason, 'order_id');
    return { kind: 'refund', refund: await recordOf(deps.db, out.refundId, req.orderId) };
  }
  if (order.flow === 'ERC20_DIRECT') return recordDirect(deps.db, order, req);
  return refused('refund_not_supported', `Tollgate does not take refunds of ${order.flow} orders yet; refund the payer from your wallet`, 'order_id');
}

/** The refunds of an order of the merchant, oldest first; undefined when it is not the merchant's. */
export async function listOrderRefunds(db: Database, merchantId: string, orderId: string): Promise<RefundRecord[] | undefined> {
  const order = (await db.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [orderId])).rows[0];
  if (!order || order.merchant_id !== merchantId) return undefined;
  return (await repo.listRefunds(db, orderId)).map((r) => refundRecord(r, order));
}

function paidOf(o: OrderRow): bigint {
  return BigInt(o.paid_amount_wei ?? o.amount_wei);
}

function sameAmount(decimal: string, o: OrderRow): boolean {
  try {
    return parseDecimal(decimal, o.decimals) === paidOf(o);
  } catch {
    return false;
  }
}

async function recordOf(db: Database, refundId: string | undefined, orderId: string): Promise<RefundRecord> {
  const rows = await repo.listRefunds(db, orderId);
  const r = rows.find((x) => x.id === refundId) ?? rows.find((x) => x.rail === 'delegate' && x.status !== 'failed')!;
  const order = (await db.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [orderId])).rows[0]!;
  return refundRecord(r, order);
}

/**
 * Records a DIRECT refund the merchant is about to send: `amount` of the order's token from the
 * wallet that was paid (`pay_to_address`) to the payer (`from_address`), on the order's chain.
 */
async function recordDirect(db: Database, order: OrderRow, req: RefundRequest): Promise<RefundRequestOutcome> {
  return db.transaction(async (tx): Promise<RefundRequestOutcome> => {
    const o = (await tx.query<OrderRow>('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [order.id])).rows[0]!;
    if (!DIRECT_REFUNDABLE.has(o.status) || o.transfer_id === null) {
      return refused('order_not_refundable', `order is ${o.status}; only a paid order (PAYMENT_CONFIRMED or INVOICED) is refunded`, 'order_id');
    }
    const remaining = paidOf(o) - repo.takenBy(await repo.listRefunds(tx, o.id));
    if (remaining <= 0n) return refused('order_not_refundable', 'the payment of this order is already refunded (or a pending refund covers it)', 'order_id');
    let amount = remaining;
    if (req.amount !== undefined) {
      try {
        amount = parseDecimal(req.amount, o.decimals);
      } catch {
        return refused('invalid_amount', `amount must be a positive decimal with at most ${o.decimals} fraction digits`, 'amount');
      }
      if (amount <= 0n) return refused('invalid_amount', 'amount must be positive', 'amount');
      if (amount > remaining) return refused('refund_exceeds_payment', `at most ${formatUnits(remaining, o.decimals)} ${o.token_symbol} remains to refund`, 'amount');
    }
    const row = await repo.insertRefund(tx, {
      id: newId('rf'),
      orderId: o.id,
      merchantId: o.merchant_id,
      rail: 'direct',
      amount,
      status: 'pending',
      requestedBy: 'merchant',
      reason: req.reason,
      chainId: o.chain_id,
      tokenContract: o.token_contract,
      fromAddress: o.pay_to_address,
      toAddress: o.from_address,
    });
    return { kind: 'refund', refund: refundRecord(row, o) };
  });
}
