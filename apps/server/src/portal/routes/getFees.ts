import { Type } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { FEE_DECIMALS } from '../../config/load.ts';
import { feeBalanceView } from '../../merchants/service.ts';
import { merchantOf } from '../http.ts';
import { ledger } from '../data/service.ts';

export const portalGetFees = defineRoute({
  method: 'GET',
  url: '/portal/api/fees',
  auth: 'portal',
  summary: 'Fee balance and the fee ledger, newest first (page with `before`, a ledger entry id)',
  tags: ['portal'],
  querystring: Type.Object({ before: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })) }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      balance: Type.Object({ available: Type.String(), reserved: Type.String(), captured: Type.String() }),
      entries: Type.Array(Type.Object({ id: Type.Integer(), kind: Type.String(), from_account: Type.String(), to_account: Type.String(), amount: Type.String(), order_id: Type.Optional(Type.String()), created_at: Type.String() })),
      next: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  async handler(req, _reply, deps) {
    const merchantId = merchantOf(req.portal);
    const balance = await deps.merchants.getFeeBalance(merchantId);
    if (!balance) throw new AppError('merchant_not_found', 'merchant not found');
    const rows = await ledger(deps, merchantId, req.query.before ? Number(req.query.before) : undefined, 51);
    const page = rows.slice(0, 50);
    return {
      balance: feeBalanceView(balance),
      entries: page.map((e) => ({
        id: e.id,
        kind: e.kind,
        from_account: e.from_account,
        to_account: e.to_account,
        amount: formatUnits(BigInt(e.amount), FEE_DECIMALS, 2),
        ...(e.order_id ? { order_id: e.order_id } : {}),
        created_at: e.created_at.toISOString(),
      })),
      next: rows.length > 50 ? String(page.at(-1)!.id) : null,
    };
  },
});
