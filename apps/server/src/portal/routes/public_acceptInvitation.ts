import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clientAddress } from '../../http/client-address.ts';
import { AppError } from '../../http/errors.ts';
import { portalAuth, presentedSession } from '../http.ts';
import { answerLogin, busy, throttled } from './public_login.ts';
import { Password, SessionSchema } from './views.ts';

export const portalAcceptInvitation = defineRoute({
  method: 'POST',
  url: '/portal/api/invitations/accept',
  auth: 'public',
  summary: 'Use a single-use invitation link: creates the invited user with this password and signs it in; the link is checked before the password is hashed, and attempts are throttled per address like sign-ins',
  tags: ['portal'],
  body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }), password: Password }, { additionalProperties: false }),
  response: { 200: SessionSchema },
  errors: [409, 410, 429],
  async handler(req, reply, deps) {
    const out = await portalAuth(deps).acceptInvitation({ token: req.body.token, password: req.body.password, ip: clientAddress(req.raw), presented: presentedSession(req.raw, deps) });
    if (out.kind === 'password_invalid') throw new AppError('invalid_request', out.reason, 'password');
    if (out.kind === 'throttled') throw throttled(reply, out.retryAfterSeconds);
    if (out.kind === 'busy') throw busy(reply);
    if (out.kind === 'not_usable') throw new AppError('invitation_not_usable', 'this invitation link is unknown, expired or already used');
    if (out.kind === 'exists') throw new AppError('portal_user_exists', 'a portal user with this email already exists');
    return answerLogin(out, reply, deps);
  },
});
