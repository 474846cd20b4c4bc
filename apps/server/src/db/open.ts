import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { acquireDataDirLock } from './lockfile.ts';
import { migrate } from './migrate.ts';
import { openPostgres } from './postgres.ts';
import type { Database } from './database.ts';

/**
 * Opens the configured database and brings its schema up to date: PostgreSQL when a URL is
 * given, else the embedded PGlite in `<dataDir>/pgdata` under a lockfile (a new one is created and
 * migrated in a child process: pglite.ts).
 */
export async function openDatabase(opts: { databaseUrl?: string | undefined; dataDir: string }): Promise<Database> {
  let db: Database;
  if (opts.databaseUrl) {
    // Migrations may wait on another process's migration lock or build an index on a big table: they
    // run on a connection of their own without the pool's per-query timeout.
    const migrator = await openPostgres(opts.databaseUrl, { max: 1, queryTimeoutMillis: 0 });
    try {
      await migrate(migrator);
    } finally {
      await migrator.close().catch(() => {});
    }
    return openPostgres(opts.databaseUrl);
  } else {
    // PGlite's module (its JS glue, ~7 MB of RSS at import) loads only for the embedded database:
    // a gateway on PostgreSQL never needs it.
    const { openPglite, withoutWasmTierUp } = await import('./pglite.ts');
    const release = acquireDataDirLock(opts.dataDir);
    withoutWasmTierUp();
    try {
      const inner = await openPglite(join(opts.dataDir, 'pgdata'), { migrate: true });
      db = {
        ...inner,
        close: async () => {
          try {
            await inner.close();
          } finally {
            release();
          }
        },
      };
    } catch (err) {
      release();
      throw err;
    }
  }
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}

/** There is no database to work on (maintenance commands never create one). */
export class NoDatabaseError extends Error {}

/**
 * Opens the configured database for a maintenance command (migrate status, backup, key rotation):
 * nothing is created or migrated. The embedded database is taken under the same lockfile as
 * `serve`, so a command refuses while a gateway runs on it (DataDirLockedError names the pid);
 * PostgreSQL gets one connection without a query timeout.
 */
export async function openForMaintenance(opts: { databaseUrl?: string | undefined; dataDir: string }): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, { max: 1, queryTimeoutMillis: 0 });
  const dir = join(opts.dataDir, 'pgdata');
  if (!existsSync(join(dir, 'PG_VERSION'))) throw new NoDatabaseError(`there is no embedded database in ${dir} (DATA_DIR=${opts.dataDir})`);
  const { connectPglite } = await import('./pglite.ts');
  const release = acquireDataDirLock(opts.dataDir);
  try {
    const inner = await connectPglite(dir);
    return {
      ...inner,
      close: async () => {
        try {
          await inner.close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
