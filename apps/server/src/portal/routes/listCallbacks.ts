import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { CallbackSchema } from '../../settlement/routes/admin_registerCallback.ts';
import { merchantOf } from '../http.ts';

export const portalListCallbacks = defineRoute({
  method: 'GET',
  url: '/portal/api/callbacks',
  auth: 'portal',
  summary: "DELEGATE: the merchant's active callback registrations, one per chain (registering one stays with the operator: it decides where payers' funds go)",
  tags: ['portal'],
  response: { 200: Type.Object({ callbacks: Type.Array(CallbackSchema) }) },
  async handler(req, _reply, deps) {
    const list = await deps.delegate.listCallbacks(merchantOf(req.portal));
    if (!list) throw new AppError('merchant_not_found', 'merchant not found');
    return { callbacks: list };
  },
});
