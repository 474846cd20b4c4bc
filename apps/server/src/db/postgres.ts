import pg from 'pg';
import { isStatementError, type Database, type Queryable, type QueryOptions, type QueryResult } from './database.ts';

const INT8 = 20;
// Same JS shapes as the PGlite adapter: int8 as number (counters, block numbers < 2^53).
const typeParser = (oid: number, format?: string) => {
  if (oid === INT8) return (v: string) => Number(v);
  return pg.types.getTypeParser(oid, format as 'text');
};

export interface PostgresOptions {
  max?: number;
  /** Bound of opening a connection (default 5,000 ms). */
  connectionTimeoutMillis?: number;
  /**
   * Client-side bound of one query (default 5,000 ms; 0: none). `connectionTimeoutMillis` only bounds
   * new connections: a server that stops answering on an open one (frozen, or a network that drops
   * packets without a reset) would hold the request, and its pool client, until the HTTP timeout or
   * forever. A query that times out fails as an outage (503) and its client is destroyed, never
   * reused. Tollgate's queries are short; migrations run on their own connection without it.
   * Found by test/integration/db-outage.test.ts (a SIGSTOPped server).
   */
  queryTimeoutMillis?: number;
}

/**
 * PostgreSQL adapter (production, and tests when TEST_DATABASE_URL is set). Many Tollgate
 * processes may share one database: all coordination is in SQL (unique constraints, conditional
 * updates, SKIP LOCKED, advisory locks), never in process memory.
 */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Database> {
  const queryTimeout = opts.queryTimeoutMillis ?? 5000;
  const pool = new pg.Pool({
    connectionString: url,
    // Names Tollgate's sessions in pg_stat_activity: operators see them, and rotate-master-key
    // refuses while another Tollgate process is connected (a URL parameter may override it).
    application_name: 'tollgate',
    max: opts.max ?? 20,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 5000,
    ...(queryTimeout > 0 ? { query_timeout: queryTimeout } : {}),
    types: { getTypeParser: typeParser as never },
  });
  // An idle client that loses its server (restart, outage) emits 'error' on the pool; without a
  // listener Node would crash the process. The next query gets a fresh connection instead.
  pool.on('error', () => {});
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<R>(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<QueryResult<R>> {
      const values = params as unknown[] | undefined;
      const r = await (opts?.name ? q.query({ name: opts.name, text: sql, values }) : q.query(sql, values));
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
      // Set when the connection cannot be trusted any more: release(err) destroys the client.
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        if (isStatementError(err)) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        else broken = err instanceof Error ? err : new Error(String(err));
        throw err;
      } finally {
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
