import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { decodeClaims } from '../verify.ts';
import { ReceiptSchema } from './views.ts';

export const merchantListMppPayments = defineRoute({
  method: 'GET',
  url: '/api/v1/mpp/payments',
  auth: 'merchant',
  summary: 'The merchant’s paid machine payments (signed receipts), newest first',
  tags: ['machine payments'],
  querystring: Type.Object(
    {
      limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
      before: Type.Optional(Type.String({ maxLength: 40, description: 'RFC 3339 paid_at of the last item of the previous page' })),
    },
    { additionalProperties: true },
  ),
  response: { 200: Type.Object({ data: Type.Array(Type.Intersect([ReceiptSchema, Type.Object({ paid_at: Type.String() })])) }) },
  async handler(req, _reply, deps) {
    const limit = Math.min(100, Math.max(1, Number(req.query.limit ?? 50)));
    let before: Date | undefined;
    if (req.query.before !== undefined) {
      before = new Date(req.query.before);
      if (Number.isNaN(before.getTime())) throw new AppError('invalid_request', 'before must be an RFC 3339 time', 'before');
    }
    const rows = await deps.mpp.payments(req.merchant.merchantId, limit, before);
    return { data: rows.map((r) => ({ status: 'paid' as const, receipt: r.receipt_jws!, ...decodeClaims(r.receipt_jws!), paid_at: r.paid_at!.toISOString() })) };
  },
});
