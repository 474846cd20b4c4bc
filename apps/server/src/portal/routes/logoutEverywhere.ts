import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clearSessionCookie, portalAuth } from '../http.ts';

export const portalLogoutEverywhere = defineRoute({
  method: 'POST',
  url: '/portal/api/logout/everywhere',
  auth: 'portal',
  summary: 'Sign out everywhere: ends every session of the signed-in user (the operator: every operator session), this one included, and clears the cookie',
  tags: ['portal'],
  response: { 200: Type.Object({ signed_out: Type.Boolean(), sessions_ended: Type.Integer() }) },
  async handler(req, reply, deps) {
    const n = await portalAuth(deps).logoutEverywhere({ userId: req.portal.userId, role: req.portal.role });
    clearSessionCookie(reply, deps);
    return { signed_out: true, sessions_ended: n };
  },
});
