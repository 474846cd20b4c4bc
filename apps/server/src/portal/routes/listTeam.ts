import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { merchantOf } from '../http.ts';
import { listOpenInvitations, listUsers } from '../repo.ts';
import { RoleSchema } from './views.ts';

export const portalListTeam = defineRoute({
  method: 'GET',
  url: '/portal/api/team',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: portal users of the merchant and open invitations',
  tags: ['portal'],
  response: {
    200: Type.Object({
      users: Type.Array(Type.Object({ user_id: Type.String(), email: Type.String(), role: RoleSchema, created_at: Type.String(), disabled: Type.Boolean() })),
      invitations: Type.Array(Type.Object({ email: Type.String(), role: RoleSchema, expires_at: Type.String() })),
    }),
  },
  errors: [403],
  async handler(req, _reply, deps) {
    const id = merchantOf(req.portal);
    const [users, invitations] = await Promise.all([listUsers(deps.db, id), listOpenInvitations(deps.db, id, new Date(deps.clock.now()))]);
    return {
      users: users.map((u) => ({ user_id: u.id, email: u.email, role: u.role, created_at: u.created_at.toISOString(), disabled: u.disabled_at !== null })),
      invitations: invitations.map((i) => ({ email: i.email, role: i.role, expires_at: i.expires_at.toISOString() })),
    };
  },
});
