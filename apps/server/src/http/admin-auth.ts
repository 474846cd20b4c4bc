import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.ts';

/**
 * Operator routes (`/admin/v1`) take `Authorization: Bearer <ADMIN_TOKEN>`. Without a configured
 * token the admin API is off (403), so a production install never exposes it by accident.
 */
export function requireAdmin(req: FastifyRequest, adminToken: string | undefined): void {
  if (!adminToken) throw new AppError('forbidden', 'admin API is disabled: set ADMIN_TOKEN to enable it');
  const header = req.headers.authorization ?? '';
  // The scheme name is case-insensitive (RFC 9110 §11.1): some clients send "bearer".
  const m = /^Bearer (.+)$/i.exec(header);
  if (!m) throw new AppError('unauthorized', 'missing admin bearer token');
  // Hash both sides so the comparison is constant-time whatever the lengths.
  const a = createHash('sha256').update(m[1]!).digest();
  const b = createHash('sha256').update(adminToken).digest();
  if (!timingSafeEqual(a, b)) throw new AppError('unauthorized', 'invalid admin token');
}
