import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { ProductSchema, productView } from '../views.ts';
import { ProductIdParams, ProductUpdateBody } from './schemas.ts';

export const merchantUpdateProduct = defineRoute({
  method: 'POST',
  url: '/api/v1/products/:product_id',
  auth: 'merchant',
  summary: 'Update a product (absent fields keep their value); sessions already open keep their price',
  tags: ['quick-pay'],
  params: ProductIdParams,
  body: ProductUpdateBody,
  response: { 200: ProductSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).updateProduct(req.merchant.merchantId, req.params.product_id, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return productView(out.product);
  },
});
