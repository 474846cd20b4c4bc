import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { selectSessionMerchant } from '../repo.ts';
import { portalAuth, presentedSession } from '../http.ts';
import { SessionSchema, sessionView } from './views.ts';

export const portalSelectMerchant = defineRoute({
  method: 'POST',
  url: '/portal/api/merchants/select',
  auth: 'portal',
  portalRole: 'operator',
  summary: 'Operator: look at this merchant (every other portal route then acts on it)',
  tags: ['portal'],
  body: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  response: { 200: SessionSchema },
  async handler(req, _reply, deps) {
    if (!(await selectSessionMerchant(deps.db, req.portal.sessionHash, req.body.merchant_id))) {
      throw new AppError('merchant_not_found', `merchant ${req.body.merchant_id} not found`, 'merchant_id');
    }
    const s = (await portalAuth(deps).session(presentedSession(req.raw, deps)!))!;
    return sessionView({ role: s.role, email: s.email, merchantId: s.merchant_id, merchantName: s.merchant_name, csrfToken: s.csrf_token, totpEnabled: false, totpEnrollment: false });
  },
});
