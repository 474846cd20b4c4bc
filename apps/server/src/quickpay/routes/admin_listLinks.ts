import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { MerchantIdParams } from '../../merchants/routes/views.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';
import { limitOf, ListQuery } from './schemas.ts';

export const adminListLinks = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/payment-links',
  auth: 'admin',
  summary: 'A merchant’s payment links, newest first',
  tags: ['admin'],
  params: MerchantIdParams,
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(LinkSchema) }) },
  async handler(req, _reply, deps) {
    return { data: (await quickpayOf(deps).listLinks(req.params.merchant_id, limitOf(req.query))).map((l) => linkView(l, deps.config.publicBaseUrl)) };
  },
});
