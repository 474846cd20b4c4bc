import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { GoatSessionSchema } from '../goat/schemas.ts';
import { goatSessionView } from '../goat/sessions.ts';
import { quickpayOf } from '../service.ts';
import { SessionIdParams } from './schemas.ts';

export const goatGetSession = defineRoute({
  method: 'GET',
  url: '/quickpay/v1/x402/sessions/:session_id',
  auth: 'public',
  summary: 'GOAT quick-pay: a session’s status (ORDER_CREATED, PAYMENT_PENDING, PAYMENT_CONFIRMED, EXPIRED, FAILED), tx_hash and amount_wei',
  tags: ['quick-pay'],
  params: SessionIdParams,
  rateLimit: 'public_read',
  response: { 200: GoatSessionSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const found = await quickpayOf(deps).getSession(req.params.session_id);
    if (!found) throw new AppError('quickpay_session_not_found', 'quick-pay session not found', 'session_id');
    reply.header('cache-control', 'no-store');
    return goatSessionView(found.view, found.status);
  },
});
