import { PGlite, types } from '@electric-sql/pglite';
import type { Database, Queryable, QueryResult } from './database.ts';

/**
 * Embedded PGlite adapter. Quirks (measured on these machines, see DESIGN.md):
 * - single connection, single process: a second process must never open the same directory, so
 *   the caller holds a lockfile (`lockfile.ts`);
 * - `transaction()` holds the only connection, so other queries wait for it: keep transactions short;
 * - a long loop of awaited queries starves the event loop less than one might hope; callers that
 *   loop over many rows yield with `setImmediate` between batches.
 * - int8 comes back as a JS number already; numeric as string (we keep both).
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  const pg = new PGlite(dataDir, {
    parsers: { [types.NUMERIC]: (v: string) => v },
  });
  await pg.waitReady;
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const r = await q.query<R>(sql, params as unknown[] | undefined);
      // PGlite reports affectedRows = 0 for a SELECT; pg's rowCount counts returned rows there.
      return { rows: r.rows, rowCount: r.rows.length > 0 ? r.rows.length : (r.affectedRows ?? 0) };
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  const base = wrap(pg);
  return {
    kind: 'pglite',
    ...base,
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    close: () => pg.close(),
  };
}
