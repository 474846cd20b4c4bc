import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clientAddress } from '../../http/client-address.ts';
import { AppError } from '../../http/errors.ts';
import { portalAuth, presentedSession } from '../http.ts';
import { busy, throttled } from './public_login.ts';
import { Password } from './views.ts';

export const portalChangePassword = defineRoute({
  method: 'POST',
  url: '/portal/api/password',
  auth: 'portal',
  summary: "Change the signed-in user's password: the current one is required (throttled like a sign-in); every other session of the user ends, this one stays",
  tags: ['portal'],
  body: Type.Object({ current_password: Type.String({ minLength: 1, maxLength: 256 }), new_password: Password }, { additionalProperties: false }),
  response: { 200: Type.Object({ changed: Type.Boolean(), other_sessions_ended: Type.Integer() }) },
  errors: [403, 429],
  async handler(req, reply, deps) {
    if (!req.portal.userId) throw new AppError('invalid_request', 'the operator signs in with the admin token and has no password to change');
    const out = await portalAuth(deps).changePassword({
      userId: req.portal.userId,
      sessionId: presentedSession(req.raw, deps)!,
      current: req.body.current_password,
      next: req.body.new_password,
      ip: clientAddress(req.raw),
    });
    switch (out.kind) {
      case 'password_invalid':
        throw new AppError('invalid_request', out.reason, 'new_password');
      case 'throttled':
        throw throttled(reply, out.retryAfterSeconds);
      case 'busy':
        throw busy(reply);
      case 'wrong_password':
        throw new AppError('password_incorrect', 'the current password is wrong', 'current_password');
      case 'changed':
        return { changed: true, other_sessions_ended: out.endedSessions };
    }
  },
});
