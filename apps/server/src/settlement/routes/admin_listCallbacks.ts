import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdParams } from '../../merchants/routes/views.ts';
import { CallbackSchema } from './admin_registerCallback.ts';

export const adminListCallbacks = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/callbacks',
  auth: 'admin',
  summary: "List a merchant's active callback registrations (one per chain)",
  tags: ['admin'],
  params: MerchantIdParams,
  response: { 200: Type.Array(CallbackSchema) },
  async handler(req, _reply, deps) {
    const list = await deps.delegate.listCallbacks(req.params.merchant_id);
    if (!list) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return list;
  },
});
