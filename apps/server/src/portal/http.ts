// The portal's HTTP side of sessions: the cookie, the CSRF check, the role check. Used by
// http/route.ts for `auth: 'portal'` routes and by the sign-in routes that set the cookie.
//
// Cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Path=/.
// Secure and the `__Host-` name prefix when PUBLIC_BASE_URL is https: a browser then sends it only
// over TLS, and no subdomain can set or shadow it. Over plain http (the dev profile on 127.0.0.1)
// a Secure cookie would not be stored at all, so it is left off there; docs/portal.md says to serve
// the portal over https in production.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PortalDeps } from './context.ts';
import { AppError } from '../http/errors.ts';
import { PortalAuth, ROLE_RANK, SESSION_TTL_SECONDS, sha256, type NewSession } from './auth.ts';
import type { SessionRole } from './repo.ts';

export interface PortalContext {
  sessionHash: string;
  role: SessionRole;
  userId: string | null;
  email: string | null;
  /** the merchant whose data the session sees (the operator's pick; NULL until it picks one) */
  merchantId: string | null;
  merchantName: string | null;
  csrfToken: string;
  /** the user has a second factor (false for the operator) */
  totpEnabled: boolean;
  /** signed in without the factor the merchant requires: only ENROLLMENT_ROUTES answer */
  totpEnrollment: boolean;
}

/** What an enrollment session may do: read itself, set up its factor, sign out. */
const ENROLLMENT_ROUTES = new Set(['GET /portal/api/session', 'POST /portal/api/totp/setup', 'POST /portal/api/totp/enable', 'POST /portal/api/logout']);

const auths = new WeakMap<PortalDeps, PortalAuth>();
/** The portal account service of these deps. */
export function portalAuth(deps: PortalDeps): PortalAuth {
  let a = auths.get(deps);
  if (!a) auths.set(deps, (a = new PortalAuth(deps.db, deps.config, deps.clock)));
  return a;
}

function cookieSecure(deps: PortalDeps): boolean {
  return deps.config.publicBaseUrl.startsWith('https:');
}

function cookieName(deps: PortalDeps): string {
  return cookieSecure(deps) ? '__Host-tollgate_portal' : 'tollgate_portal';
}

/** The session cookie's value in this request, if any. */
export function presentedSession(req: FastifyRequest, deps: PortalDeps): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  const name = cookieName(deps);
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}

export function setSessionCookie(reply: FastifyReply, deps: PortalDeps, s: NewSession): void {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${SESSION_TTL_SECONDS}`, ...(cookieSecure(deps) ? ['Secure'] : [])];
  reply.header('set-cookie', `${cookieName(deps)}=${s.sessionId}; ${attrs.join('; ')}`);
  reply.header('cache-control', 'no-store');
}

export function clearSessionCookie(reply: FastifyReply, deps: PortalDeps): void {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=0', ...(cookieSecure(deps) ? ['Secure'] : [])];
  reply.header('set-cookie', `${cookieName(deps)}=; ${attrs.join('; ')}`);
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates a portal request: a live session (401 portal_session_required), the CSRF token on
 * every unsafe method (403 csrf_token_invalid), and at least `minRole` (403 forbidden).
 */
export async function authenticatePortal(req: FastifyRequest, deps: PortalDeps, minRole: SessionRole): Promise<PortalContext> {
  const id = presentedSession(req, deps);
  const s = id ? await portalAuth(deps).session(id) : undefined;
  if (!s) throw new AppError('portal_session_required', 'sign in to the portal first');
  if (!SAFE.has(req.method)) {
    const sent = req.headers['x-csrf-token'];
    const ok = typeof sent === 'string' && sent.length === s.csrf_token.length && timingSafeEqual(Buffer.from(sent), Buffer.from(s.csrf_token));
    if (!ok) throw new AppError('csrf_token_invalid', 'missing or wrong X-CSRF-Token header');
  }
  if (s.totp_enrollment && !ENROLLMENT_ROUTES.has(`${req.method} ${req.routeOptions.url}`)) {
    throw new AppError('totp_enrollment_required', 'this merchant requires a second factor: set one up first (POST /portal/api/totp/setup)');
  }
  if (ROLE_RANK[s.role] < ROLE_RANK[minRole]) throw new AppError('forbidden', `this needs the ${minRole} role; you are ${s.role}`);
  return {
    sessionHash: sha256(id!),
    role: s.role,
    userId: s.user_id,
    email: s.email,
    merchantId: s.merchant_id,
    merchantName: s.merchant_name,
    csrfToken: s.csrf_token,
    totpEnabled: s.totp_enabled === true,
    totpEnrollment: s.totp_enrollment,
  };
}

/** The merchant a portal request acts on; the operator must have picked one. */
export function merchantOf(ctx: PortalContext): string {
  if (!ctx.merchantId) throw new AppError('invalid_request', 'pick a merchant first (POST /portal/api/merchants/select)');
  return ctx.merchantId;
}

// http/route.ts carries the portal's session types (req.portal, RouteDef.portalRole) without
// importing the portal: the core names no plug-in.
declare module '../http/route.ts' {
  interface PortalAuthTypes {
    context: PortalContext;
    role: SessionRole;
  }
}
