import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf, portalAuth } from '../http.ts';
import { Email, RoleSchema } from './views.ts';

export const portalInvite = defineRoute({
  method: 'POST',
  url: '/portal/api/team/invitations',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: invite a user with a role; the single-use link (valid 7 days) is in this answer only',
  tags: ['portal'],
  body: Type.Object({ email: Email, role: RoleSchema }, { additionalProperties: false }),
  response: { 201: Type.Object({ email: Type.String(), role: RoleSchema, invitation_url: Type.String({ description: 'shown once; send it to the person' }), expires_at: Type.String() }) },
  errors: [403, 409],
  async handler(req, reply, deps) {
    const out = await portalAuth(deps).invite({ merchantId: merchantOf(req.portal), email: req.body.email, role: req.body.role, invitedBy: req.portal.userId });
    if (out.kind === 'exists') throw new AppError('portal_user_exists', 'a portal user with this email already exists', 'email');
    reply.status(201).header('cache-control', 'no-store');
    return { email: req.body.email.trim().toLowerCase(), role: req.body.role, invitation_url: out.url, expires_at: out.expiresAt.toISOString() };
  },
});
