import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { RAILS } from '../rails/index.ts';
import { quickpayOf } from '../service.ts';
import { MerchantSessionSchema, merchantSessionView } from '../views.ts';
import { limitOf, ListQuery } from './schemas.ts';

export const adminListLinkSessions = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/payment-links/:link_id/sessions',
  auth: 'admin',
  summary: 'The quick-pay sessions of a link with their orders, newest first',
  tags: ['admin'],
  params: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 100 }), link_id: Type.String({ minLength: 1, maxLength: 100 }) }),
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(MerchantSessionSchema) }) },
  async handler(req, _reply, deps) {
    const rows = await quickpayOf(deps).linkSessions(req.params.merchant_id, req.params.link_id, limitOf(req.query));
    if (!rows) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    const now = deps.clock.now();
    return { data: rows.map((v) => merchantSessionView(v, RAILS[v.session.rail]?.status(v, now) ?? 'OPEN')) };
  },
});
