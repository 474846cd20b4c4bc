import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { ORDER_STATUSES } from '../../orders/states.ts';
import { merchantOf } from '../http.ts';
import { decodeCursor, listOrders } from '../data/service.ts';
import { IsoDate, OrderRowSchema, orderRowView, parseDay } from './views.ts';

const MAX_LIMIT = 100;

export const portalListOrders = defineRoute({
  method: 'GET',
  url: '/portal/api/orders',
  auth: 'portal',
  summary: 'Orders newest first, filtered and searched (order id, dapp_order_id, payer address or tx hash), in keyset pages: pass `next` as `cursor`',
  tags: ['portal'],
  querystring: Type.Object(
    {
      q: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      status: Type.Optional(Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s)))),
      flow: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[A-Z_]+$' })),
      chain_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$' })),
      token: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
      from: Type.Optional(IsoDate),
      to: Type.Optional(IsoDate),
      cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ orders: Type.Array(OrderRowSchema), next: Type.Union([Type.String(), Type.Null()]) }) },
  async handler(req, _reply, deps) {
    const q = req.query;
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    if (q.cursor && !after) throw new AppError('invalid_request', 'cursor is not one this list returned', 'cursor');
    const from = parseDay(q.from);
    const to = parseDay(q.to);
    if ((q.from && !from) || (q.to && !to)) throw new AppError('invalid_request', 'from/to must be dates such as 2026-01-31', q.from && !from ? 'from' : 'to');
    // chain ids are 32-bit in the database: a larger one matches nothing (and must not reach SQL).
    if (q.chain_id && Number(q.chain_id) > 2_147_483_647) return { orders: [], next: null };
    const limit = Math.min(Math.max(Number(q.limit ?? 25), 1), MAX_LIMIT);
    const page = await listOrders(deps, merchantOf(req.portal), {
      search: q.q,
      status: q.status,
      flow: q.flow,
      chainId: q.chain_id ? Number(q.chain_id) : undefined,
      token: q.token,
      from,
      to,
      after,
      limit,
    });
    return { orders: page.orders.map(orderRowView), next: page.next };
  },
});
