import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdParams } from '../../merchants/routes/views.ts';
import { quickpayOf } from '../service.ts';
import { ProductSchema, productView } from '../views.ts';
import { ProductCreateBody } from './schemas.ts';

export const adminCreateProduct = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/products',
  auth: 'admin',
  summary: 'Create a product for a merchant (same body as POST /api/v1/products)',
  tags: ['admin'],
  params: MerchantIdParams,
  body: ProductCreateBody,
  response: { 200: ProductSchema },
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).createProduct(req.params.merchant_id, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return productView(out.product);
  },
});
