// Password reset links (portal/reset.ts): the operator issues one, a user with SMTP configured asks
// for one by mail, and the link's page sets the new password.
import { Type } from '@sinclair/typebox';
import type { AppDeps } from '../../deps.ts';
import { clientAddress } from '../../http/client-address.ts';
import { AppError } from '../../http/errors.ts';
import { defineRoute } from '../../http/route.ts';
import { portalAuth } from '../http.ts';
import { smtpMailer } from '../mailer.ts';
import { PasswordResets } from '../reset.ts';
import { busy, throttled } from './public_login.ts';
import { Email, Password } from './views.ts';

const resets = new WeakMap<AppDeps, PasswordResets>();
function resetsOf(deps: AppDeps): PasswordResets {
  let r = resets.get(deps);
  if (!r) resets.set(deps, (r = new PasswordResets(deps.db, deps.config, deps.clock, portalAuth(deps), deps.config.smtp ? smtpMailer(deps.config.smtp) : undefined)));
  return r;
}

export const adminIssuePasswordReset = defineRoute({
  method: 'POST',
  url: '/admin/v1/portal-users/password-resets',
  auth: 'admin',
  summary: 'A single-use password reset link for a portal user (valid 24 h; a newer link voids older ones): hand it to the user out of band',
  tags: ['admin'],
  body: Type.Object({ email: Email }, { additionalProperties: false }),
  response: { 201: Type.Object({ email: Type.String(), reset_url: Type.String({ description: 'shown once' }), expires_at: Type.String() }) },
  async handler(req, reply, deps) {
    const out = await resetsOf(deps).issueByOperator(req.body.email);
    if (out.kind === 'not_found') throw new AppError('portal_user_not_found', 'no active portal user with this email', 'email');
    reply.code(201).header('cache-control', 'no-store');
    return { email: out.email, reset_url: out.url, expires_at: out.expiresAt.toISOString() };
  },
});

export const portalRequestPasswordReset = defineRoute({
  method: 'POST',
  url: '/portal/api/password-resets',
  auth: 'public',
  summary: 'Mail a password reset link (needs SMTP settings, else 403 password_reset_unavailable); the answer is the same whether or not the email has an account',
  tags: ['portal'],
  body: Type.Object({ email: Email }, { additionalProperties: false }),
  response: { 202: Type.Object({ requested: Type.Boolean() }) },
  errors: [403, 429],
  async handler(req, reply, deps) {
    const out = await resetsOf(deps).request(req.body.email, clientAddress(req.raw));
    if (out.kind === 'unavailable') throw new AppError('password_reset_unavailable', 'this deployment sends no mail: ask the operator for a reset link (tollgate portal reset-link EMAIL)');
    if (out.kind === 'throttled') throw throttled(reply, out.retryAfterSeconds);
    reply.code(202);
    return { requested: true };
  },
});

export const portalCompletePasswordReset = defineRoute({
  method: 'POST',
  url: '/portal/api/password-resets/complete',
  auth: 'public',
  summary: 'Set a new password with a reset link’s token: every session of the user ends; sign in with the new password (and the second factor, if set up)',
  tags: ['portal'],
  body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }), password: Password }, { additionalProperties: false }),
  response: { 200: Type.Object({ email: Type.String(), sessions_ended: Type.Integer() }) },
  errors: [429],
  async handler(req, reply, deps) {
    const out = await resetsOf(deps).complete({ token: req.body.token, password: req.body.password, ip: clientAddress(req.raw) });
    switch (out.kind) {
      case 'password_invalid':
        throw new AppError('invalid_request', out.reason, 'password');
      case 'throttled':
        throw throttled(reply, out.retryAfterSeconds);
      case 'busy':
        throw busy(reply);
      case 'not_usable':
        throw new AppError('reset_link_not_usable', 'this reset link is unknown, expired or already used', 'token');
      case 'reset':
        return { email: out.email, sessions_ended: out.endedSessions };
    }
  },
});
