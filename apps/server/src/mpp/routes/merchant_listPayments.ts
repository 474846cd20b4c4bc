import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { decodeClaims } from '../verify.ts';
import { ReceiptSchema } from './views.ts';
import { parseRfc3339 } from '../../http/time.ts';

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
      // The shared parser: a strict RFC 3339 time in 1970..9999 (Date alone took `+275760-09-13…`,
      // which the database refused: a 500 the route fuzzer found).
      before = parseRfc3339(req.query.before);
      if (!before) throw new AppError('invalid_request', 'before must be an RFC 3339 time between 1970 and 9999', 'before');
    }
    const rows = await deps.mpp.payments(req.merchant.merchantId, limit, before);
    return { data: rows.map((r) => ({ status: 'paid' as const, receipt: r.receipt_jws!, ...decodeClaims(r.receipt_jws!), paid_at: r.paid_at!.toISOString() })) };
  },
});
