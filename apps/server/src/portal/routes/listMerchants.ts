import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { listMerchants } from '../repo.ts';

export const portalListMerchants = defineRoute({
  method: 'GET',
  url: '/portal/api/merchants',
  auth: 'portal',
  portalRole: 'operator',
  summary: 'Operator: every merchant (first 1000 by creation)',
  tags: ['portal'],
  response: { 200: Type.Object({ merchants: Type.Array(Type.Object({ merchant_id: Type.String(), name: Type.String(), created_at: Type.String() })) }) },
  async handler(_req, _reply, deps) {
    const rows = await listMerchants(deps.db);
    return { merchants: rows.map((m) => ({ merchant_id: m.id, name: m.name, created_at: m.created_at.toISOString() })) };
  },
});
