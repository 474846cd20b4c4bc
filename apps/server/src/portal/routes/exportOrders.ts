import { Type } from '@sinclair/typebox';
import { defineRoute, type RouteDef } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf } from '../http.ts';
import { exportCsv } from '../data/service.ts';
import { IsoDate, parseDay } from './views.ts';

const Query = Type.Object({ from: IsoDate, to: IsoDate }, { additionalProperties: false });

export function exportRoute(kind: 'orders' | 'payments'): RouteDef<undefined, typeof Query, undefined> {
  return defineRoute({
    method: 'GET',
    url: `/portal/api/exports/${kind}.csv`,
    auth: 'portal',
    summary:
      kind === 'orders' ? 'CSV of the orders created in [from, to), every rail, in the export column set (docs/portal.md); streamed' : 'CSV of the paid orders (every rail) created in [from, to), then the refunds made in [from, to) as their own rows; streamed',
    tags: ['portal'],
    querystring: Query,
    response: { 200: Type.String({ description: 'text/csv' }) },
    async handler(req, reply, deps) {
      const from = parseDay(req.query.from);
      const to = parseDay(req.query.to);
      if (!from || !to || from >= to) throw new AppError('invalid_request', 'from and to must be dates with from < to', 'from');
      const stream = await exportCsv(deps, merchantOf(req.portal), { from, to, paidOnly: kind === 'payments' });
      const name = `${kind}-${req.query.from.slice(0, 10)}-${req.query.to.slice(0, 10)}.csv`;
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`).header('cache-control', 'no-store');
      return reply.send(stream);
    },
  });
}

export const portalExportOrders = exportRoute('orders');
