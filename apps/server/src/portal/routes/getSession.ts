import { defineRoute } from '../../http/route.ts';
import { SessionSchema, sessionView } from './views.ts';

export const portalGetSession = defineRoute({
  method: 'GET',
  url: '/portal/api/session',
  auth: 'portal',
  summary: 'The signed-in portal session: role, merchant and CSRF token',
  tags: ['portal'],
  response: { 200: SessionSchema },
  async handler(req, reply) {
    reply.header('cache-control', 'no-store');
    return sessionView(req.portal);
  },
});
