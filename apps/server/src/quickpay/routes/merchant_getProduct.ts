import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { ProductSchema, productView } from '../views.ts';
import { ProductIdParams } from './schemas.ts';

export const merchantGetProduct = defineRoute({
  method: 'GET',
  url: '/api/v1/products/:product_id',
  auth: 'merchant',
  summary: 'One product',
  tags: ['quick-pay'],
  params: ProductIdParams,
  response: { 200: ProductSchema },
  async handler(req, _reply, deps) {
    const p = await quickpayOf(deps).getProduct(req.merchant.merchantId, req.params.product_id);
    if (!p) throw new AppError('product_not_found', 'product not found', 'product_id');
    return productView(p);
  },
});
