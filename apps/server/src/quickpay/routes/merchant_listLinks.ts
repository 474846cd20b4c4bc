import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { quickpayOf } from '../service.ts';
import { LinkSchema, linkView } from '../views.ts';
import { limitOf, ListQuery } from './schemas.ts';

export const merchantListLinks = defineRoute({
  method: 'GET',
  url: '/api/v1/payment-links',
  auth: 'merchant',
  summary: 'The merchant’s payment links, newest first',
  tags: ['quick-pay'],
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(LinkSchema) }) },
  async handler(req, _reply, deps) {
    return { data: (await quickpayOf(deps).listLinks(req.merchant.merchantId, limitOf(req.query))).map((l) => linkView(l, deps.config.publicBaseUrl)) };
  },
});
