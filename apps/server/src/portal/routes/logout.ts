import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clearSessionCookie, portalAuth, presentedSession } from '../http.ts';

export const portalLogout = defineRoute({
  method: 'POST',
  url: '/portal/api/logout',
  auth: 'portal',
  summary: 'Sign out: deletes the session and clears the cookie',
  tags: ['portal'],
  response: { 200: Type.Object({ signed_out: Type.Boolean() }) },
  async handler(req, reply, deps) {
    await portalAuth(deps).logout(presentedSession(req.raw, deps)!);
    clearSessionCookie(reply, deps);
    return { signed_out: true };
  },
});
