import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { portalAuth } from '../http.ts';
import { Email, RoleSchema } from './views.ts';

export const adminCreatePortalUser = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/portal-users',
  auth: 'admin',
  summary: "Create a merchant's portal user (the first owner, `tollgate portal add-user`); a generated password is in this answer only",
  tags: ['portal'],
  params: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  body: Type.Object({ email: Email, role: Type.Optional(RoleSchema) }, { additionalProperties: false }),
  response: { 201: Type.Object({ user_id: Type.String(), email: Type.String(), role: RoleSchema, password: Type.String({ description: 'shown once; the user signs in with it at /portal' }) }) },
  errors: [409],
  async handler(req, reply, deps) {
    // 24 random characters (144 bits): nobody guesses it, and the user can keep it in a manager.
    const password = randomBytes(18).toString('base64url');
    const role = req.body.role ?? 'owner';
    const out = await portalAuth(deps).createUser({ merchantId: req.params.merchant_id, email: req.body.email, password, role });
    if (out.kind === 'merchant_not_found') throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    if (out.kind === 'password_invalid') throw new AppError('invalid_request', out.reason, 'password');
    if (out.kind === 'exists') throw new AppError('portal_user_exists', 'a portal user with this email already exists', 'email');
    reply.status(201).header('cache-control', 'no-store');
    return { user_id: out.userId, email: req.body.email.trim().toLowerCase(), role, password };
  },
});
