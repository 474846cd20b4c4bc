// The signed-in user's second factor (portal/mfa.ts): set up, confirm, new recovery codes, turn off.
import { Type } from '@sinclair/typebox';
import { clientAddress } from '../../http/client-address.ts';
import { AppError } from '../../http/errors.ts';
import { defineRoute } from '../../http/route.ts';
import { merchantOf, portalAuth, type PortalContext } from '../http.ts';
import { merchantRequiresTotp, setMerchantRequiresTotp } from '../mfa-repo.ts';
import { clearLoginFailures, findUserById, uncountAttempt, type UserRow } from '../repo.ts';
import { throttled } from './public_login.ts';

const Code = Type.String({ minLength: 6, maxLength: 32, description: 'a current code of the authenticator app (or, where said, a recovery code)' });

async function userOf(ctx: PortalContext, deps: Parameters<typeof portalAuth>[0]): Promise<UserRow> {
  if (!ctx.userId) throw new AppError('invalid_request', 'the operator signs in with the admin token and has no second factor here');
  const u = await findUserById(deps.db, ctx.userId);
  if (!u) throw new AppError('portal_session_required', 'sign in to the portal first');
  return u;
}

/** A current factor of the user, counted like a sign-in attempt (per account and address). */
async function requireFactor(user: UserRow, code: string, ip: string, reply: Parameters<typeof throttled>[0], deps: Parameters<typeof portalAuth>[0]): Promise<void> {
  const auth = portalAuth(deps);
  const wait = await auth.attempt([`acct:${user.email}`, `ip:${ip}`]);
  if (wait > 0) throw throttled(reply, wait);
  if (!(await auth.mfa.check(deps.db, user, code))) throw new AppError('totp_code_invalid', 'the code does not match, or was already used', 'code');
  // A right factor clears the account's failures and takes the attempt back, as a sign-in does.
  await clearLoginFailures(deps.db, `acct:${user.email}`);
  await uncountAttempt(deps.db, [`ip:${ip}`]);
}

export const portalTotpSetup = defineRoute({
  method: 'POST',
  url: '/portal/api/totp/setup',
  auth: 'portal',
  summary: 'Start setting up a second factor: a new secret and its otpauth:// URI for an authenticator app (confirm with POST /portal/api/totp/enable)',
  tags: ['portal'],
  body: Type.Object({}, { additionalProperties: false }),
  response: {
    200: Type.Object({
      secret: Type.String({ description: 'base32; shown once' }),
      otpauth_url: Type.String(),
      qr: Type.Object({ size: Type.Integer(), path: Type.String() }, { description: 'the otpauth URL as a QR code: one SVG path in a size × size viewBox (quiet zone included)' }),
    }),
  },
  async handler(req, reply, deps) {
    const user = await userOf(req.portal, deps);
    if (user.totp_secret_ciphertext) throw new AppError('invalid_request', 'a second factor is already set up; turn it off first to replace it');
    reply.header('cache-control', 'no-store');
    const s = await portalAuth(deps).mfa.setup(user);
    return { secret: s.secret, otpauth_url: s.otpauthUrl, qr: s.qr };
  },
});

export const portalTotpEnable = defineRoute({
  method: 'POST',
  url: '/portal/api/totp/enable',
  auth: 'portal',
  summary: 'Confirm the second factor with a code from the app; answers 10 recovery codes, shown once',
  tags: ['portal'],
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  response: { 200: Type.Object({ enabled: Type.Boolean(), recovery_codes: Type.Array(Type.String()) }) },
  async handler(req, reply, deps) {
    const user = await userOf(req.portal, deps);
    const out = await portalAuth(deps).mfa.enable(user, req.body.code);
    if (out.kind === 'no_setup') throw new AppError('invalid_request', 'start with POST /portal/api/totp/setup');
    if (out.kind === 'code_invalid') throw new AppError('totp_code_invalid', 'the code does not match the secret being set up', 'code');
    reply.header('cache-control', 'no-store');
    return { enabled: true, recovery_codes: out.recoveryCodes };
  },
});

export const portalTotpRecoveryCodes = defineRoute({
  method: 'POST',
  url: '/portal/api/totp/recovery-codes',
  auth: 'portal',
  summary: 'New recovery codes (the old ones stop working); needs a current code',
  tags: ['portal'],
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  response: { 200: Type.Object({ recovery_codes: Type.Array(Type.String()) }) },
  errors: [429],
  async handler(req, reply, deps) {
    const user = await userOf(req.portal, deps);
    if (!user.totp_secret_ciphertext) throw new AppError('invalid_request', 'no second factor is set up');
    await requireFactor(user, req.body.code, clientAddress(req.raw), reply, deps);
    reply.header('cache-control', 'no-store');
    return { recovery_codes: await portalAuth(deps).mfa.regenerate(user.id) };
  },
});

export const portalTotpDisable = defineRoute({
  method: 'POST',
  url: '/portal/api/totp/disable',
  auth: 'portal',
  summary: 'Turn the second factor off (needs a current code or a recovery code); refused while the merchant requires one',
  tags: ['portal'],
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  response: { 200: Type.Object({ enabled: Type.Boolean() }) },
  errors: [429],
  async handler(req, reply, deps) {
    const user = await userOf(req.portal, deps);
    if (!user.totp_secret_ciphertext) return { enabled: false };
    if (await merchantRequiresTotp(deps.db, user.merchant_id)) throw new AppError('totp_required_by_merchant', 'this merchant requires a second factor of every user');
    await requireFactor(user, req.body.code, clientAddress(req.raw), reply, deps);
    await portalAuth(deps).mfa.disable(user.id);
    return { enabled: false };
  },
});

export const portalSetRequireTotp = defineRoute({
  method: 'PUT',
  url: '/portal/api/settings/require-totp',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: require a second factor of every portal user of the merchant (users without one must set it up at their next sign-in); the owner needs one first',
  tags: ['portal'],
  body: Type.Object({ require_totp: Type.Boolean() }, { additionalProperties: false }),
  response: { 200: Type.Object({ require_totp: Type.Boolean() }) },
  errors: [403],
  async handler(req, _reply, deps) {
    const merchantId = merchantOf(req.portal);
    if (req.body.require_totp && req.portal.userId && !req.portal.totpEnabled) {
      throw new AppError('invalid_request', 'set up your own second factor first, so requiring one cannot lock you out', 'require_totp');
    }
    await setMerchantRequiresTotp(deps.db, merchantId, req.body.require_totp);
    return { require_totp: req.body.require_totp };
  },
});
