/**
 * The storage port. Both adapters (embedded PGlite, PostgreSQL via `pg`) run the same SQL, and
 * both return values in the same JS shapes:
 * - `numeric` → string (money is `numeric(78,0)`; callers turn it into bigint),
 * - `int8`/`bigserial` → number (only used for counters and block numbers, all < 2^53),
 * - `timestamptz` → Date, `jsonb` → parsed value.
 */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/**
 * `name` makes the statement a named prepared statement on PostgreSQL: parsed and planned once
 * per connection instead of on every call. For the hot paths only (a big CTE costs more to plan
 * than to run: bench/BENCHMARKS.md); the name must be unique to the SQL text. PGlite ignores it.
 */
export interface QueryOptions {
  name?: string;
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<QueryResult<R>>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** SQLSTATE of a unique_violation; natural keys map it to a typed duplicate outcome. */
export const UNIQUE_VIOLATION = '23505';
/** SQLSTATE of deadlock_detected: Postgres aborted this statement to break a lock cycle; nothing of it was written. */
export const DEADLOCK_DETECTED = '40P01';
/** SQLSTATE of a check_violation (e.g. a fee balance that would go negative). */
export const CHECK_VIOLATION = '23514';

export function isPgError(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

/** The constraint name of a Postgres error, when it has one. */
export function pgConstraint(err: unknown): string | undefined {
  const c = (err as { constraint?: unknown } | null)?.constraint;
  return typeof c === 'string' ? c : undefined;
}

/**
 * Whether an error is the server refusing one statement (a SQLSTATE outside the connection and
 * shutdown classes 08 and 57): the connection stays usable, and retrying other work is sensible.
 * A timeout or a broken connection is not: ROLLBACK on it would only wait for another timeout, and
 * a batch that fails that way fails for every item in it.
 */
export function isStatementError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57)/.test(code);
}
