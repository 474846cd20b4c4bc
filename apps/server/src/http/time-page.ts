import { Type } from '@sinclair/typebox';
import { AppError } from './errors.ts';
import { parseRfc3339 } from './time.ts';

/**
 * The querystring of a list paged by time, newest first: `limit` (1..100, default 50) and `before`,
 * the time of the last item of the previous page (`field` names which time, for the OpenAPI text).
 */
export function timePageQuery(field: string) {
  return Type.Object(
    {
      limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
      before: Type.Optional(Type.String({ maxLength: 40, description: `RFC 3339 ${field} of the last item of the previous page` })),
    },
    { additionalProperties: true },
  );
}

/**
 * Reads a time page. `before` goes through the shared RFC 3339 parser (1970..9999): Date alone took
 * `+275760-09-13…`, which the database refused, a 500 the route fuzzer found.
 */
export function timePage(q: { limit?: string; before?: string }): { limit: number; before: Date | undefined } {
  const limit = Math.min(100, Math.max(1, Number(q.limit ?? 50)));
  if (q.before === undefined) return { limit, before: undefined };
  const before = parseRfc3339(q.before);
  if (!before) throw new AppError('invalid_request', 'before must be an RFC 3339 time between 1970 and 9999', 'before');
  return { limit, before };
}
