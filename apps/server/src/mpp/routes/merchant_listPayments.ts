import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { paymentView } from '../events.ts';
import { ReceiptSchema } from './views.ts';
import { timePage, timePageQuery } from '../../http/time-page.ts';

export const merchantListMppPayments = defineRoute({
  method: 'GET',
  url: '/api/v1/mpp/payments',
  auth: 'merchant',
  summary: 'The merchant’s paid machine payments (signed receipts), newest first; each item is also the payload of the mpp.payment.confirmed webhook event',
  tags: ['machine payments'],
  querystring: timePageQuery('paid_at'),
  response: { 200: Type.Object({ data: Type.Array(Type.Intersect([ReceiptSchema, Type.Object({ paid_at: Type.String() })])) }) },
  async handler(req, _reply, deps) {
    const { limit, before } = timePage(req.query);
    const rows = await deps.mpp.payments(req.merchant.merchantId, limit, before);
    return { data: rows.map((r) => paymentView(r)) };
  },
});
