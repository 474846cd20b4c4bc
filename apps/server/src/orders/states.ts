import { ORDER_STATUSES, type OrderStatus } from '@tollgate/protocol';

/**
 * The order state machine: statuses, every valid move, and the pure decisions the watcher and the
 * services take. No I/O here; `repo.transitionOrder` applies a move as a conditional UPDATE.
 *
 * Statuses and meanings: docs/orders.md "Lifecycle". Moves not spelled out there (into INVOICED, FAILED,
 * EXPIRED) are fixed here:
 *  - CHECKOUT_VERIFIED → PAYMENT_CONFIRMED when the matched transfer reaches `confirmations`;
 *  - CHECKOUT_VERIFIED → INVOICED directly when confirmation and finality are reached in one pass
 *    (a poller may never see PAYMENT_CONFIRMED);
 *  - PAYMENT_CONFIRMED → INVOICED at `finality_confirmations` (the fee is captured then);
 *  - PAYMENT_CONFIRMED → CHECKOUT_VERIFIED only when a reorg deeper than `confirmations` orphans
 *    the paying transfer: the payment evidence is gone, so the order waits again rather than
 *    pretending. PAYMENT_CONFIRMED is never a fulfilment gate, so this regress cannot cause a
 *    wrong delivery; INVOICED never regresses;
 *  - CHECKOUT_VERIFIED → EXPIRED by the sweeper when past `expires_at` with no payment seen;
 *  - CHECKOUT_VERIFIED → EXPIRED (trigger `supersede`) when the same payer starts a new checkout or
 *    quick-pay session with the same terms while this session order is unpaid (orders/supersede.ts);
 *  - CHECKOUT_VERIFIED → CANCELLED by the merchant;
 *  - CHECKOUT_VERIFIED | PAYMENT_CONFIRMED → FAILED by an operator or a later rail (card);
 *  - CHECKOUT_VERIFIED | EXPIRED | CANCELLED → INVOICED (trigger `accept`) only when the merchant
 *    explicitly accepts a final late or under-payment recorded against the order
 *    (orders/accept.ts). EXPIRED and CANCELLED stay terminal for everything automatic.
 */
// The list is the wire's (packages/protocol/src/states.ts); the moves between them are the server's.
export { ORDER_STATUSES, type OrderStatus };

export type OrderTrigger = 'confirm' | 'invoice' | 'orphan' | 'expire' | 'supersede' | 'cancel' | 'fail' | 'accept';

/** From → trigger → to. Absent entries are illegal moves. */
const ORDER_TRANSITIONS = {
  CHECKOUT_VERIFIED: { confirm: 'PAYMENT_CONFIRMED', invoice: 'INVOICED', expire: 'EXPIRED', supersede: 'EXPIRED', cancel: 'CANCELLED', fail: 'FAILED', accept: 'INVOICED' },
  PAYMENT_CONFIRMED: { invoice: 'INVOICED', orphan: 'CHECKOUT_VERIFIED', fail: 'FAILED' },
  INVOICED: {},
  FAILED: {},
  EXPIRED: { accept: 'INVOICED' },
  CANCELLED: { accept: 'INVOICED' },
} as const satisfies Record<OrderStatus, Partial<Record<OrderTrigger, OrderStatus>>>;

/** The target of `trigger` from `from`, or undefined when the move is illegal. */
export function nextStatus(from: OrderStatus, trigger: OrderTrigger): OrderStatus | undefined {
  const row: Partial<Record<OrderTrigger, OrderStatus>> = ORDER_TRANSITIONS[from];
  return row[trigger];
}

export function isOrderStatus(s: unknown): s is OrderStatus {
  return typeof s === 'string' && (ORDER_STATUSES as readonly string[]).includes(s);
}

/**
 * Confirmations of a log in block `blockNumber` when the head is `head`: the block itself counts
 * as one (viem's `waitForTransactionReceipt` semantics). 0 when the head is behind the block.
 */
export function depthOf(blockNumber: bigint, head: bigint): number {
  return head >= blockNumber ? Number(head - blockNumber + 1n) : 0;
}

/**
 * The trigger the depth of a paying transfer calls for, or undefined when nothing changes. Moves
 * straight to INVOICED when finality is reached, whatever intermediate status was visible.
 */
export function depthTrigger(status: OrderStatus, depth: number, t: { confirmations: number; finality: number /** false for DELEGATE orders: INVOICED comes from their settlement's finality */; invoices?: boolean }): 'confirm' | 'invoice' | undefined {
  if (status !== 'CHECKOUT_VERIFIED' && status !== 'PAYMENT_CONFIRMED') return undefined;
  if (t.invoices !== false && depth >= t.finality && depth >= 1) return 'invoice';
  if (t.invoices === false && status === 'CHECKOUT_VERIFIED' && depth >= Math.min(t.confirmations, t.finality) && depth >= 1) return 'confirm';
  if (status === 'CHECKOUT_VERIFIED' && depth >= t.confirmations && depth >= 1) return 'confirm';
  return undefined;
}
