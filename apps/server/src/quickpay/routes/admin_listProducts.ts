import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { MerchantIdParams } from '../../merchants/routes/views.ts';
import { quickpayOf } from '../service.ts';
import { ProductSchema, productView } from '../views.ts';
import { limitOf, ListQuery } from './schemas.ts';

/** The operator's view of a merchant's products (what `tollgate link list` names each link by). */
export const adminListProducts = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/products',
  auth: 'admin',
  summary: 'A merchant’s products, newest first',
  tags: ['admin'],
  params: MerchantIdParams,
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(ProductSchema) }) },
  async handler(req, _reply, deps) {
    return { data: (await quickpayOf(deps).listProducts(req.params.merchant_id, limitOf(req.query))).map(productView) };
  },
});
