// Quick-pay products in the portal: the same service and views as the merchant API
// (/api/v1/products, quickpay/service.ts), behind the portal's session, role and CSRF checks.
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { quickpayOf } from '../../quickpay/service.ts';
import { ProductSchema, productView } from '../../quickpay/views.ts';
import { limitOf, ListQuery, ProductCreateBody, ProductIdParams, ProductUpdateBody } from '../../quickpay/routes/schemas.ts';
import { merchantOf } from '../http.ts';

export const portalListProducts = defineRoute({
  method: 'GET',
  url: '/portal/api/products',
  auth: 'portal',
  summary: "The session merchant's quick-pay products, newest first",
  tags: ['portal'],
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(ProductSchema) }) },
  async handler(req, _reply, deps) {
    return { data: (await quickpayOf(deps).listProducts(merchantOf(req.portal), limitOf(req.query))).map(productView) };
  },
});

export const portalCreateProduct = defineRoute({
  method: 'POST',
  url: '/portal/api/products',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Create a product (server-owned price) for payment links',
  tags: ['portal'],
  body: ProductCreateBody,
  response: { 201: ProductSchema },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await quickpayOf(deps).createProduct(merchantOf(req.portal), req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.status(201);
    return productView(out.product);
  },
});

export const portalUpdateProduct = defineRoute({
  method: 'POST',
  url: '/portal/api/products/:product_id',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Edit a product (absent fields keep their value; `active: false` deactivates it); open sessions keep their price',
  tags: ['portal'],
  params: ProductIdParams,
  body: ProductUpdateBody,
  response: { 200: ProductSchema },
  errors: [403],
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).updateProduct(merchantOf(req.portal), req.params.product_id, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return productView(out.product);
  },
});
