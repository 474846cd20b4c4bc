// The statuses a client reads on the wire, one list each: the server's state machines, the SDK, the
// merchant portal and the checkout pages all take them from here. Like webhook-events.ts this module
// imports nothing (no node:crypto), so the browser bundles import it by its own subpath
// (`@tollgate/protocol/states`) without pulling the signing code in.

/** Order statuses (docs/orders.md "Lifecycle"). */
export const ORDER_STATUSES = ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'INVOICED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/**
 * States the gateway never moves an order out of by itself; INVOICED is the only one that permits
 * fulfilment. The merchant may still move EXPIRED or CANCELLED to INVOICED by accepting a late
 * payment (docs/attribution.md).
 */
export const TERMINAL_ORDER_STATUSES = ['INVOICED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const satisfies readonly OrderStatus[];
export type TerminalOrderStatus = (typeof TERMINAL_ORDER_STATUSES)[number];

/** The other states: a payment can still arrive and count (what a checkout page may still pay). */
export const LIVE_ORDER_STATUSES = ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED'] as const satisfies readonly OrderStatus[];

/**
 * Whether a status is terminal. An unknown status (from a newer server) is not.
 *
 * @example isTerminalOrderStatus('EXPIRED') // => true
 * @example isTerminalOrderStatus('PAYMENT_CONFIRMED') // => false: not a permission to fulfil
 */
export function isTerminalOrderStatus(status: string): status is TerminalOrderStatus {
  return (TERMINAL_ORDER_STATUSES as readonly string[]).includes(status);
}

/** Checkout session statuses (docs/hosted-checkout.md, docs/card-payments.md). SIGNED is a compatibility value nothing produces. */
export const SESSION_STATUSES = ['OPEN', 'BOUND', 'COMPLETED', 'EXPIRED', 'CANCELLED', 'FAILED', 'SIGNED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Quick-pay session statuses (docs/quickpay.md). */
export const QUICKPAY_STATUSES = ['OPEN', 'PAYMENT_CONFIRMED', 'COMPLETED', 'EXPIRED', 'FAILED'] as const;
export type QuickPayStatus = (typeof QUICKPAY_STATUSES)[number];

/** Quick-pay payment link states (docs/quickpay.md). */
export const LINK_STATES = ['ACTIVE', 'INACTIVE', 'EXPIRED', 'SOLD_OUT'] as const;
export type LinkState = (typeof LINK_STATES)[number];
