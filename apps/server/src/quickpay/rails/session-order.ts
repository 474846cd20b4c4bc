// What every quick-pay rail shares between a session and its order: the order's reference, the
// refusal shape, and the session status read from the order (each rail only names what "paid" means).
import type { Queryable } from '../../db/database.ts';
import type { SessionOrderRef } from '../../orders/ports.ts';
import type { SessionWithOrder } from '../repo.ts';
import type { QuickPayStatus, RailRefusal } from './port.ts';

/** The dapp_order_id of a session's order, whatever its rail: unique per merchant, names the session (sync.ts reads it back). */
export const QUICKPAY_ORDER_PREFIX = 'quickpay:';
export const quickpayOrderRef = (sessionId: string) => `${QUICKPAY_ORDER_PREFIX}${sessionId}`;

/**
 * Whether a live order is a quick-pay session's order of its own merchant (orders/ports.ts
 * sessionOrder, wired by main.ts): a returning payer's new session order may supersede it.
 */
export async function isQuickPaySessionOrder(q: Queryable, o: SessionOrderRef): Promise<boolean> {
  if (!o.dapp_order_id.startsWith(QUICKPAY_ORDER_PREFIX)) return false;
  const { rows } = await q.query('SELECT 1 FROM quickpay_sessions WHERE id = $1 AND merchant_id = $2', [o.dapp_order_id.slice(QUICKPAY_ORDER_PREFIX.length), o.merchant_id]);
  return rows.length > 0;
}

export const refused = (code: RailRefusal['code'], message: string, param?: string): RailRefusal => ({ kind: 'refused', code, message, param });

/**
 * A quick-pay session's status from its order, the part every rail shares: no order yet → OPEN
 * until the window ends; a live order → OPEN while its window lasts or while a payment is under
 * way (a transfer seen, or a card payment the processor is processing: such a session is never
 * shown EXPIRED, it ends when the payment does); EXPIRED / CANCELLED → EXPIRED; FAILED → FAILED.
 * What a paid order means differs per rail (docs/quickpay.md), so the rail says it:
 * crypto shows PAYMENT_CONFIRMED for both PAYMENT_CONFIRMED and INVOICED; card stays OPEN while
 * PAYMENT_CONFIRMED (held) and is COMPLETED on INVOICED.
 */
export function sessionStatusFromOrder(v: SessionWithOrder, nowMs: number, paid: { PAYMENT_CONFIRMED: QuickPayStatus; INVOICED: QuickPayStatus }): QuickPayStatus {
  const o = v.order;
  if (!o) return nowMs < v.session.expires_at.getTime() ? 'OPEN' : 'EXPIRED';
  switch (o.status) {
    case 'CHECKOUT_VERIFIED':
      return o.payment_seen || nowMs < o.expires_at.getTime() ? 'OPEN' : 'EXPIRED';
    case 'PAYMENT_CONFIRMED':
    case 'INVOICED':
      return paid[o.status];
    case 'EXPIRED':
    case 'CANCELLED':
      return 'EXPIRED';
    case 'FAILED':
      return 'FAILED';
    default: {
      const never: never = o.status;
      throw new Error(`unknown order status ${never as string}`);
    }
  }
}
