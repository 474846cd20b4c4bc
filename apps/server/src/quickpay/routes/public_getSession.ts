import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { SessionSchema, sessionCreatedView } from '../views.ts';
import { SessionIdParams } from './schemas.ts';

export const publicGetQuickPaySession = defineRoute({
  method: 'GET',
  url: '/quickpay/v1/sessions/:session_id',
  auth: 'public',
  summary: 'A quick-pay session: terms while OPEN; then status, order_id, order_status, tx_hash (crypto: PAYMENT_CONFIRMED when the order is PAYMENT_CONFIRMED or INVOICED)',
  tags: ['quick-pay'],
  params: SessionIdParams,
  rateLimit: 'public_read',
  response: { 200: SessionSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const found = await quickpayOf(deps).getSession(req.params.session_id);
    if (!found) throw new AppError('quickpay_session_not_found', 'quick-pay session not found', 'session_id');
    reply.header('cache-control', 'no-store');
    return sessionCreatedView(found.view, found.status, found.rail, deps.config);
  },
});
