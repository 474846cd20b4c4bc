import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { portalAuth, presentedSession } from '../http.ts';

/**
 * Whether the browser's cookie is a live session, as a 200 either way: the portal page asks this
 * first, so a visitor who is not signed in sees the sign-in form without a 401 in the browser's
 * console. Says nothing else (no role, no CSRF token): GET /portal/api/session does.
 */
export const portalGetSessionState = defineRoute({
  method: 'GET',
  url: '/portal/api/session/state',
  auth: 'public',
  summary: 'Whether the session cookie is signed in (200 either way); the session itself is GET /portal/api/session',
  tags: ['portal'],
  response: { 200: Type.Object({ signed_in: Type.Boolean() }) },
  async handler(req, reply, deps) {
    reply.header('cache-control', 'no-store');
    const id = presentedSession(req.raw, deps);
    return { signed_in: id !== undefined && (await portalAuth(deps).session(id)) !== undefined };
  },
});
