// How a quick-pay session holds a unit of a limited link (`max_payments`) or product (`inventory`)
// before it is paid (docs/quickpay.md, "Limits and holds"). Anonymous payers open sessions without
// an account, so an unpaid session must not keep stock away from paying customers for long:
//  - the hold is short: a session of a limited link gets a payment window of at most HOLD_SECONDS
//    (not the order TTL); when it lapses with nothing seen on the chain the unit is free again
//    (repo.countHeldSessions), whether or not the expiry sweeper has run yet;
//  - one client address holds at most MAX_UNPAID_HOLDS unpaid sessions of one limited link or
//    product at a time (the address is kept only as a keyed hash, `holder`);
//  - stock is never oversold: a payment after its hold lapsed pays an expired order, recorded
//    `late` for the merchant to accept or refund like any late payment.
import { createHmac } from 'node:crypto';

/** Seconds an unpaid session of a limited link holds its unit (and may be paid). */
export const HOLD_SECONDS = 300;

/** Unpaid sessions of one limited link or product that one client address may hold at once. */
export const MAX_UNPAID_HOLDS = 2;

/**
 * The `holder` of a session: an HMAC of the client address under the deployment's master key, so
 * the database never stores the address and every process of a deployment computes the same key.
 *
 * @example holderKey(masterKey, '203.0.113.7') // => '5f1c…' (32 hex digits)
 */
export function holderKey(masterKey: Buffer, clientAddress: string): string {
  return createHmac('sha256', masterKey).update(`quickpay-holder:${clientAddress}`).digest('hex').slice(0, 32);
}

/** Whether sessions of this link hold a unit of a limit (the link's count or the product's stock). */
export const isLimited = (link: { max_payments: number | null }, product: { inventory: number | null } | undefined) => link.max_payments !== null || product?.inventory != null;
