import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../http/route.ts';
import { AppError } from '../../../http/errors.ts';
import { CheckoutIdParams } from '../../../checkout/routes/public_getSession.ts';
import { cardsOf } from '../index.ts';
import { CardStartSchema } from '../views.ts';

/**
 * Card payment initiation for a checkout session offering `fiat`: creates the session's
 * FIAT_<PROCESSOR> order (or returns its live one, e.g. after a decline) and tells the page what
 * to do next. The session stays OPEN (a card session need not pass through BOUND).
 *  - a crypto order is live for the session → 409 card_payment_active;
 *  - expired → 410 session_expired; completed/cancelled/failed, or less than 120 s left → 410 session_not_payable;
 *  - no fiat rail → 400 rail_not_enabled; no processor configured → 503 card_processor_unavailable.
 */
export const publicStartCardPayment = defineRoute({
  method: 'POST',
  url: '/checkout/v1/sessions/:checkout_id/card',
  auth: 'public',
  summary: 'Start paying a session by card: creates (or returns) its card order',
  tags: ['checkout'],
  params: CheckoutIdParams,
  body: Type.Object({}, { additionalProperties: false, description: 'empty object, or no body at all' }),
  rateLimit: 'checkout_bind',
  response: { 200: CardStartSchema },
  errors: [409, 410, 429, 503],
  async handler(req, reply, deps) {
    const out = await cardsOf(deps).startForSession(req.params.checkout_id);
    if (out.kind === 'not_found') throw new AppError('session_not_found', 'checkout session not found', 'checkout_id');
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.header('cache-control', 'no-store');
    return out.start;
  },
});
