import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clientAddress } from '../../http/client-address.ts';
import { portalAuth, presentedSession } from '../http.ts';
import { answerLogin } from './public_login.ts';
import { SessionSchema } from './views.ts';

export const portalOperatorLogin = defineRoute({
  method: 'POST',
  url: '/portal/api/operator/login',
  auth: 'public',
  summary: 'Operator sign-in with the admin token (ADMIN_TOKEN): a session that sees every merchant; throttled per address',
  tags: ['portal'],
  body: Type.Object({ admin_token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false }),
  response: { 200: SessionSchema },
  errors: [403, 429],
  async handler(req, reply, deps) {
    const out = await portalAuth(deps).operatorLogin({ adminToken: req.body.admin_token, ip: clientAddress(req.raw), presented: presentedSession(req.raw, deps) });
    return answerLogin(out, reply, deps);
  },
});
