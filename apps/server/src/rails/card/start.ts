import { createHash } from 'node:crypto';
import { newId, type ErrorCode } from '@tollgate/protocol';
import type { Config } from '../../config/schema.ts';
import type { Database, Queryable } from '../../db/database.ts';
import { isPgError, UNIQUE_VIOLATION } from '../../db/database.ts';
import { reserveFee } from '../../fees/ledger.ts';
import { FIAT_CURRENCIES } from '../../checkout/fields.ts';
import type { CardOrderRow } from './columns.ts';
import { patchOrder } from '../../orders/repo.ts';
import { cardReturnUrl, flowOf, nextActionOf, type CardProcessor, type NextAction } from './port.ts';
import * as repo from './repo.ts';

/**
 * Starting a card payment, for whatever owns the payment (a checkout session today, a quick-pay
 * session next): one FIAT_<PROCESSOR> order per request, fee reserved in the same transaction as
 * the order (like every order), then the processor's payment, asked for once per order with an
 * idempotency key derived from the order id.
 */
export type Refused = { kind: 'refused'; code: ErrorCode; message: string; param?: string | undefined };
export const refused = (code: ErrorCode, message: string, param?: string): Refused => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

export interface CardStart {
  order_id: string;
  flow: string;
  processor: string;
  currency: string;
  amount: string;
  order_status: string;
  payment_state: string;
  expires_at: number;
  next_action: NextAction;
}

export interface CardOrderRequest {
  merchantId: string;
  /** unique per merchant: a second request with the same id resumes that order (no second order) */
  dappOrderId: string;
  /** ISO 4217, upper case, one of checkout/fields.ts FIAT_CURRENCIES */
  currency: string;
  /** decimal string with at most the currency's minor units */
  amount: string;
  expiresAt: Date;
  checkoutId?: string | undefined;
  /** where the processor's hosted page sends the payer back */
  returnUrl: string;
  /**
   * Runs in the creating transaction, after the order row and fee reserve: link the order to the
   * caller's aggregate. false → everything rolls back and the caller gets `retry`.
   */
  link?: (tx: Queryable, orderId: string) => Promise<boolean>;
}

/** `retry`: the link refused or a concurrent request created the order first; re-read and decide again. */
export type StartResult = { kind: 'started'; start: CardStart; created: boolean } | { kind: 'retry' } | Refused;

export interface StartContext {
  db: Database;
  config: Pick<Config, 'fees'>;
  processor: CardProcessor | undefined;
}

class Abort extends Error {
  readonly why: 'fee' | 'link';
  constructor(why: 'fee' | 'link') {
    super(why);
    this.why = why;
  }
}

export async function startCardPayment(ctx: StartContext, req: CardOrderRequest): Promise<StartResult> {
  const p = ctx.processor;
  if (!p) return refused('card_processor_unavailable', 'no card processor is configured in this deployment');
  const minorUnits = FIAT_CURRENCIES[req.currency];
  if (minorUnits === undefined) return refused('invalid_request', `${req.currency} is not a supported card currency`, 'fiat_currency');
  let amountMinor: bigint;
  try {
    amountMinor = toMinor(req.amount, minorUnits);
  } catch {
    return refused('invalid_amount', `the amount must be a positive decimal with at most ${minorUnits} fraction digits`, 'fiat_amount');
  }
  if (amountMinor <= 0n) return refused('invalid_amount', 'the amount must be positive', 'fiat_amount');
  const fee = ctx.config.fees.perOrderMicros;
  const orderId = newId('ord');
  try {
    await ctx.db.transaction(async (tx) => {
      await repo.insertCardOrder(
        tx,
        {
          id: orderId,
          merchantId: req.merchantId,
          dappOrderId: req.dappOrderId,
          flow: flowOf(p.name),
          currency: req.currency,
          minorUnits,
          amountMinor,
          fiatAmount: req.amount,
          feeAmount: fee,
          expiresAt: req.expiresAt,
          checkoutId: req.checkoutId,
          fromAddress: opaqueAddress(orderId),
        },
        p.name,
      );
      if (fee > 0n && !(await reserveFee(tx, req.merchantId, orderId, fee))) throw new Abort('fee');
      if (req.link && !(await req.link(tx, orderId))) throw new Abort('link');
    });
  } catch (err) {
    if (err instanceof Abort) return err.why === 'fee' ? refused('insufficient_fee_balance', 'the merchant fee balance cannot cover this order') : { kind: 'retry' };
    if (isPgError(err, UNIQUE_VIOLATION)) {
      // The same dapp_order_id again (a retry, or a concurrent request that won): resume that
      // card order while it is live; anything else is the caller's to re-read.
      const o = await repo.orderByDappId(ctx.db, req.merchantId, req.dappOrderId);
      if (o && o.flow === flowOf(p.name) && o.status === 'CHECKOUT_VERIFIED') return { kind: 'started', created: false, start: await ensureStarted(ctx, o.id, req.returnUrl) };
      return { kind: 'retry' };
    }
    throw err;
  }
  return { kind: 'started', created: true, start: await ensureStarted(ctx, orderId, req.returnUrl) };
}

/** Asks the processor for the payment of a card order unless it already has one; the page's next step. */
export async function ensureStarted(ctx: StartContext, orderId: string, returnUrl: string): Promise<CardStart> {
  const { db } = ctx;
  const p = ctx.processor!;
  let cp = (await repo.getCardPayment(db, orderId))!;
  const order = (await db.query<CardOrderRow>('SELECT * FROM orders WHERE id = $1', [orderId])).rows[0]!;
  if (!cp.payment_reference) {
    const started = await p.startPayment({
      orderId,
      merchantId: order.merchant_id,
      checkoutId: order.checkout_id ?? undefined,
      amountMinor: BigInt(order.amount_wei),
      currency: order.fiat_currency!,
      description: `Order ${orderId}`,
      returnUrl: cardReturnUrl(returnUrl, 'paid'),
      cancelUrl: cardReturnUrl(returnUrl, 'cancelled'),
      expiresAt: order.expires_at,
      createdAt: order.created_at,
      // One processor payment per card order: a retried start after a timeout finds it.
      idempotencyKey: `tollgate-start-${orderId}`,
    });
    await db.transaction(async (tx) => {
      await repo.updateCardPayment(tx, orderId, { payment_reference: started.paymentReference, redirect_url: started.next.type === 'redirect' ? started.next.url : null });
      await patchOrder(tx, orderId, order.status, { payment_reference: started.paymentReference });
    });
    cp = (await repo.getCardPayment(db, orderId))!;
  }
  return {
    order_id: orderId,
    flow: order.flow,
    processor: p.name,
    currency: order.fiat_currency!,
    amount: order.fiat_amount!,
    order_status: order.status,
    payment_state: cp.state,
    expires_at: Math.floor(order.expires_at.getTime() / 1000),
    next_action: nextActionOf(cp),
  };
}

/** "9.50" with 2 minor units → 950n (throws on a malformed amount). */
export function toMinor(decimal: string, minorUnits: number): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!m || (m[2]?.length ?? 0) > minorUnits) throw new Error(`not a decimal amount with at most ${minorUnits} fraction digits`);
  return BigInt(m[1]! + (m[2] ?? '').padEnd(minorUnits, '0'));
}

/**
 * The `from_address` of a card order: 20 bytes of sha256 over the order id. Not a wallet, never
 * paid to or watched; it only keeps the live-terms unique key (which spans live orders of every
 * flow) from pairing two card orders of the same amount.
 */
export function opaqueAddress(orderId: string): string {
  return `0x${createHash('sha256').update(`card-order:${orderId}`).digest('hex').slice(0, 40)}`;
}
