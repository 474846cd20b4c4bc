// The one place a request's client address is derived. Every per-address limit keys on it: the
// rate-limit classes of the public routes (checkout, quick-pay, x402, machine payments; app.ts)
// and portal sign-in throttling and password hashing (portal/routes/public_login.ts,
// public_operatorLogin.ts, public_acceptInvitation.ts, changePassword.ts).
import type { FastifyRequest } from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import type { TrustProxy } from '../config/trust-proxy.ts';

/**
 * IPv6 addresses are grouped by their /64: one subscriber usually holds a whole /64, so counting
 * single addresses would hand one client 2^64 budgets.
 */
const IPV6_PREFIX = 64;

/**
 * The client address of `req`, as a limit key: fastify's `req.ip` (the TCP peer, or with
 * `trustProxy` the nearest `X-Forwarded-For` entry not written by a trusted proxy), IPv4-mapped
 * IPv6 written as IPv4 and IPv6 cut to its /64 network.
 *
 * @example clientAddress(req) // => '203.0.113.7', or '2001:db8:0:1::' for 2001:db8:0:1::42
 */
export function clientAddress(req: FastifyRequest): string {
  // A socket already closed has no remote address: such requests share one key.
  const ip = req.ip;
  return ip ? normalizeIP(ip, IPV6_PREFIX) : 'unknown';
}

/**
 * The configured {@link TrustProxy} as fastify's `trustProxy` option. A hop count becomes a
 * function: fastify 5.12 ignores a numeric `trustProxy` (it fails closed, trusting nobody), which
 * would leave every client behind the proxy sharing the proxy's address without a word.
 */
export function fastifyTrustProxy(tp: TrustProxy | undefined): false | string[] | ((address: string, hop: number) => boolean) {
  if (tp === undefined || tp === false) return false;
  if (typeof tp === 'number') return (_address, hop) => hop < tp;
  return tp;
}
