import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { checkoutOf } from '../service.ts';
import { SessionStatusSchema, sessionStatusProjection } from '../views.ts';
import { CheckoutIdParams } from './public_getSession.ts';

export const publicGetCheckoutSessionStatus = defineRoute({
  method: 'GET',
  url: '/checkout/v1/sessions/:checkout_id/status',
  auth: 'public',
  summary: 'Session status projection: status, order_id?, order_status?, tx_hash? (200 also for terminal sessions)',
  tags: ['checkout'],
  params: CheckoutIdParams,
  rateLimit: 'public_read',
  response: { 200: SessionStatusSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const v = await checkoutOf(deps).getSession(req.params.checkout_id);
    if (!v) throw new AppError('session_not_found', 'checkout session not found', 'checkout_id');
    reply.header('cache-control', 'no-store');
    return sessionStatusProjection(v, deps.clock.now());
  },
});
