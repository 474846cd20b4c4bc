import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { formatUnits } from '@tollgate/protocol';
import { merchantOf } from '../http.ts';
import { overview } from '../data/service.ts';

export const portalGetOverview = defineRoute({
  method: 'GET',
  url: '/portal/api/overview',
  auth: 'portal',
  summary: 'Orders and volume per UTC day, status and token or card currency over the last `days` days (default 30, at most 90)',
  tags: ['portal'],
  querystring: Type.Object({ days: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}$' })) }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      days: Type.Integer(),
      buckets: Type.Array(
        Type.Object({
          day: Type.String(),
          status: Type.String(),
          token_symbol: Type.String({ description: 'the token, or for card orders the fiat currency' }),
          rail: Type.Union([Type.Literal('crypto'), Type.Literal('card')]),
          orders: Type.Integer(),
          amount: Type.String({ description: 'token or currency units (card amounts keep their minor digits: 9.50)' }),
        }),
      ),
    }),
  },
  async handler(req, _reply, deps) {
    const days = Math.min(Math.max(Number(req.query.days ?? 30), 1), 90);
    const rows = await overview(deps, merchantOf(req.portal), days);
    return {
      days,
      buckets: rows.map((r) => ({ day: r.day, status: r.status, token_symbol: r.token_symbol, rail: r.card ? ('card' as const) : ('crypto' as const), orders: r.orders, amount: formatUnits(BigInt(r.amount_wei), r.decimals, r.card ? r.decimals : 0) })),
    };
  },
});
