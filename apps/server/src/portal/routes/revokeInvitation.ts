import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf, portalAuth } from '../http.ts';
import { Email } from './views.ts';

export const portalRevokeInvitation = defineRoute({
  method: 'POST',
  url: '/portal/api/team/invitations/revoke',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: revoke the unused invitations of the merchant for this email (their links stop working at once)',
  tags: ['portal'],
  body: Type.Object({ email: Email }, { additionalProperties: false }),
  response: { 200: Type.Object({ email: Type.String(), revoked: Type.Integer() }) },
  errors: [403],
  async handler(req, _reply, deps) {
    const n = await portalAuth(deps).revokeInvitations(merchantOf(req.portal), req.body.email);
    if (n === 0) throw new AppError('not_found', 'no unused invitation for this email', 'email');
    return { email: req.body.email.trim().toLowerCase(), revoked: n };
  },
});
