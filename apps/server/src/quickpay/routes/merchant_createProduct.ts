import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../service.ts';
import { ProductSchema, productView } from '../views.ts';
import { ProductCreateBody } from './schemas.ts';

export const merchantCreateProduct = defineRoute({
  method: 'POST',
  url: '/api/v1/products',
  auth: 'merchant',
  summary: 'Create a product (server-owned price) for payment links',
  tags: ['quick-pay'],
  body: ProductCreateBody,
  response: { 200: ProductSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).createProduct(req.merchant.merchantId, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return productView(out.product);
  },
});
