import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { quickpayOf } from '../service.ts';
import { ProductSchema, productView } from '../views.ts';
import { limitOf, ListQuery } from './schemas.ts';

export const merchantListProducts = defineRoute({
  method: 'GET',
  url: '/api/v1/products',
  auth: 'merchant',
  summary: 'The merchant’s products, newest first',
  tags: ['quick-pay'],
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(ProductSchema) }) },
  async handler(req, _reply, deps) {
    return { data: (await quickpayOf(deps).listProducts(req.merchant.merchantId, limitOf(req.query))).map(productView) };
  },
});
