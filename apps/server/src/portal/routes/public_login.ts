import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { clientAddress } from '../../http/client-address.ts';
import { AppError } from '../../http/errors.ts';
import { portalAuth, presentedSession, setSessionCookie } from '../http.ts';
import type { LoginOutcome } from '../auth.ts';
import type { AppDeps } from '../../deps.ts';
import type { FastifyReply } from 'fastify';
import { Email, SessionSchema, sessionView } from './views.ts';

/** 429 auth_busy: the process hashes as much as it allows (portal/hashgate.ts); retry in a second. */
export function busy(reply: FastifyReply): AppError {
  reply.header('retry-after', '1');
  return new AppError('auth_busy', 'too many passwords are being checked right now; retry in a second');
}

/** 429 rate_limited with Retry-After: too many failed attempts from this account or address. */
export function throttled(reply: FastifyReply, seconds: number): AppError {
  reply.header('retry-after', String(seconds));
  return new AppError('rate_limited', `too many failed attempts; retry in ${seconds} s`);
}

/** Maps a sign-in outcome: the cookie and the session view, or the refusal. Shared by the sign-in routes. */
export async function answerLogin(out: LoginOutcome | { kind: 'disabled' }, reply: FastifyReply, deps: AppDeps) {
  switch (out.kind) {
    case 'throttled':
      throw throttled(reply, out.retryAfterSeconds);
    case 'busy':
      throw busy(reply);
    case 'failed':
      throw new AppError('login_failed', 'wrong email, password or code');
    case 'totp_required':
      throw new AppError('totp_required', 'enter the code of your authenticator app (or a recovery code)', 'totp');
    case 'disabled':
      throw new AppError('forbidden', 'operator sign-in is disabled: set ADMIN_TOKEN to enable it');
    case 'ok': {
      setSessionCookie(reply, deps, out.session);
      const s = await portalAuth(deps).session(out.session.sessionId);
      if (!s) throw new AppError('service_unavailable', 'the new session could not be read back');
      return sessionView({ role: s.role, email: s.email, merchantId: s.merchant_id, merchantName: s.merchant_name, csrfToken: s.csrf_token, totpEnabled: s.totp_enabled === true, totpEnrollment: s.totp_enrollment });
    }
  }
}

export const portalLogin = defineRoute({
  method: 'POST',
  url: '/portal/api/login',
  auth: 'public',
  summary:
    'Portal sign-in with email and password (and `totp`, the second factor, when the user has one: 401 totp_required without it): sets the session cookie (a new session id every time) and returns the CSRF token; throttled per account and per address (attempts counted before the password is checked); 429 auth_busy when the server is hashing as much as it allows',
  tags: ['portal'],
  body: Type.Object(
    {
      email: Email,
      password: Type.String({ minLength: 1, maxLength: 256 }),
      totp: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'the authenticator code (or a recovery code) of a user with a second factor' })),
    },
    { additionalProperties: false },
  ),
  response: { 200: SessionSchema },
  errors: [429],
  async handler(req, reply, deps) {
    const out = await portalAuth(deps).login({ email: req.body.email, password: req.body.password, totp: req.body.totp, ip: clientAddress(req.raw), presented: presentedSession(req.raw, deps) });
    return answerLogin(out, reply, deps);
  },
});
