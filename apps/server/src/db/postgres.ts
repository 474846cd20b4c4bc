import pg from 'pg';
import type { Database, Queryable, QueryResult } from './database.ts';

const INT8 = 20;
// Same JS shapes as the PGlite adapter: int8 as number (counters, block numbers < 2^53).
const typeParser = (oid: number, format?: string) => {
  if (oid === INT8) return (v: string) => Number(v);
  return pg.types.getTypeParser(oid, format as 'text');
};

/**
 * PostgreSQL adapter (production, and tests when TEST_DATABASE_URL is set). Many Tollgate
 * processes may share one database: all coordination is in SQL (unique constraints, conditional
 * updates, SKIP LOCKED, advisory locks), never in process memory.
 */
export async function openPostgres(url: string, opts: { max?: number; connectionTimeoutMillis?: number } = {}): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 20,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 5000,
    types: { getTypeParser: typeParser as never },
  });
  // An idle client that loses its server (restart, outage) emits 'error' on the pool; without a
  // listener Node would crash the process. The next query gets a fresh connection instead.
  pool.on('error', () => {});
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const r = await q.query(sql, params as unknown[] | undefined);
      return { rows: r.rows as R[], rowCount: r.rowCount ?? r.rows.length };
    },
    async exec(sql: string) {
      await q.query(sql);
    },
  });
  // Fail fast on a wrong URL instead of at the first request.
  const probe = await pool.connect();
  probe.release();
  return {
    kind: 'postgres',
    ...wrap(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
