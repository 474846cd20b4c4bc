import { Type } from '@sinclair/typebox';
import type { AppDeps } from '../../../deps.ts';
import type { CardOrderRow } from '../columns.ts';
import type { CardPaymentRow } from '../repo.ts';
import { defineRoute } from '../../../http/route.ts';
import { AppError } from '../../../http/errors.ts';
import { CheckoutIdParams } from '../../../checkout/routes/public_getSession.ts';
import { cardsOf } from '../index.ts';
import { last4, normalizeCardNumber } from '../test/cards.ts';
import { TestCardProcessor } from '../test/processor.ts';

/**
 * The TEST processor's card form posts here (hosted checkout page, same origin). The card number
 * is used to pick the simulated outcome and is then dropped: it is never stored, logged or echoed
 * (error messages name the field, never its value); only the last four digits come back.
 * Answers 503 card_processor_unavailable unless the deployment's processor is TEST.
 */
/** The TEST card form's body (hosted checkout and quick-pay pages). */
export const TestCardBody = Type.Object(
  {
    number: Type.String({ minLength: 12, maxLength: 23, description: 'a test card number (docs/card-payments.md)' }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 2000, maximum: 2100 }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$' }),
  },
  { additionalProperties: false },
);

export const TestCardResult = Type.Object({
  outcome: Type.String({ description: 'succeeded, processing, or declined (the payer may retry with another card)' }),
  decline_code: Type.Optional(Type.String()),
  card_last4: Type.String(),
  order_id: Type.String(),
  order_status: Type.String(),
  held_reasons: Type.Optional(Type.Array(Type.String())),
});

type Found = { order: CardOrderRow; payment: CardPaymentRow } | undefined;

/**
 * Pays the card order `find` returns with a TEST card, for any owner of a card order (a checkout
 * session here, a quick-pay session in quickpay/routes). `find` is called again after the charge
 * to answer the order's new state. Throws AppErrors (the routes' refusals).
 */
export async function payWithTestCard(deps: AppDeps, find: () => Promise<Found>, b: { number: string; exp_month: number; exp_year: number; cvc: string }, notFound: string, param: string) {
  const cards = cardsOf(deps);
  const p = cards.processor;
  if (!(p instanceof TestCardProcessor)) throw new AppError('card_processor_unavailable', 'the TEST card processor is not enabled in this deployment');
  const number = normalizeCardNumber(b.number);
  if (!number) throw new AppError('invalid_request', 'number is not a valid card number', 'number');
  const now = new Date(deps.clock.now());
  const { exp_month: m, exp_year: y } = b;
  if (y < now.getUTCFullYear() || (y === now.getUTCFullYear() && m < now.getUTCMonth() + 1)) throw new AppError('invalid_request', 'the card has expired', 'exp_year');
  const found = await find();
  if (!found) throw new AppError('session_not_found', notFound, param);
  const { order, payment } = found;
  if (order.status !== 'CHECKOUT_VERIFIED') throw new AppError('session_not_payable', `the card order is ${order.status}; no new payment is taken`);
  if (payment.state === 'processing') throw new AppError('card_payment_active', 'a card payment is already processing for this session');
  if (!payment.payment_reference) throw new AppError('session_not_found', notFound, param);
  const events = p.charge(number, { orderId: order.id, paymentReference: payment.payment_reference, amountMinor: BigInt(order.amount_wei), currency: order.fiat_currency! }, Math.floor(now.getTime() / 1000));
  await cards.applyBatch(p.name, events);
  const after = (await find())!;
  const outcome = after.payment.state === 'declined' ? 'declined' : after.payment.state === 'processing' ? 'processing' : 'succeeded';
  return {
    outcome,
    ...(outcome === 'declined' && after.payment.decline_code ? { decline_code: after.payment.decline_code } : {}),
    card_last4: last4(number),
    order_id: order.id,
    order_status: after.order.status,
    ...(after.order.held_reasons?.length ? { held_reasons: after.order.held_reasons } : {}),
  };
}

export const publicTestCardPayment = defineRoute({
  method: 'POST',
  url: '/checkout/v1/sessions/:checkout_id/card/test-payment',
  auth: 'public',
  summary: "TEST processor only: pay the session's card order with a test card",
  tags: ['checkout'],
  params: CheckoutIdParams,
  body: TestCardBody,
  rateLimit: 'checkout_bind',
  response: { 200: TestCardResult },
  errors: [409, 410, 429, 503],
  async handler(req, reply, deps) {
    const out = await payWithTestCard(deps, () => cardsOf(deps).payableOrderOfSession(req.params.checkout_id), req.body, 'no card payment was started for this checkout session', 'checkout_id');
    reply.header('cache-control', 'no-store');
    return out;
  },
});
