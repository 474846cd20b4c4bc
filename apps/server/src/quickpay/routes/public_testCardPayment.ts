import { defineRoute } from '../../http/route.ts';
import { cardsOf } from '../../rails/card/index.ts';
import { payWithTestCard, TestCardBody, TestCardResult } from '../../rails/card/routes/public_testCardPayment.ts';
import { quickpayOf } from '../service.ts';
import { SessionIdParams } from './schemas.ts';

/**
 * The TEST processor's card form on the hosted link page posts here: pays the card order of a
 * quick-pay card session (same rules as the checkout one; the card number picks the simulated
 * outcome and is dropped, never stored or logged). 503 unless the processor is TEST.
 */
export const publicQuickPayTestCardPayment = defineRoute({
  method: 'POST',
  url: '/quickpay/v1/sessions/:session_id/card/test-payment',
  auth: 'public',
  summary: 'TEST processor only: pay a card quick-pay session with a test card',
  tags: ['quick-pay'],
  params: SessionIdParams,
  body: TestCardBody,
  rateLimit: 'checkout_bind',
  response: { 200: TestCardResult },
  errors: [409, 410, 429, 503],
  async handler(req, reply, deps) {
    const find = async () => {
      const found = await quickpayOf(deps).getSession(req.params.session_id);
      // payableOrder answers only card orders: a crypto session has none to pay here.
      const orderId = found?.view.order?.id;
      return orderId ? cardsOf(deps).payableOrder(orderId) : undefined;
    };
    const out = await payWithTestCard(deps, find, req.body, 'no card payment was started for this quick-pay session', 'session_id');
    reply.header('cache-control', 'no-store');
    return out;
  },
});
