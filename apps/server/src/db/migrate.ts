import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Database, Queryable } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Arbitrary constant shared by every Tollgate process: the advisory lock that serializes migrators.
const MIGRATION_LOCK = 7_402_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads `migrations/NNNN_name.sql` in order; numbering must be dense from 1. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((f, i) => {
    const version = Number(f.slice(0, 4));
    if (version !== i + 1) throw new Error(`migration numbering has a gap or duplicate at ${f}`);
    return { version, name: f.slice(5, -4), sql: readFileSync(join(dir, f), 'utf8') };
  });
}

/** Where a database stands against this build's migrations. */
export interface MigrationStatus {
  applied: { version: number; name: string; appliedAt: Date }[];
  /** This build's migrations the database has not had yet, in order. */
  pending: Migration[];
  /** Versions the database has that this build does not know (a newer Tollgate migrated it). */
  unknown: number[];
}

/** Reads `schema_migrations` (a database never migrated has none: everything is pending). */
export async function migrationStatus(db: Queryable, migrations = listMigrations()): Promise<MigrationStatus> {
  const { rows: exists } = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  const rows = exists[0]?.t ? (await db.query<{ version: number; name: string; applied_at: Date }>('SELECT version, name, applied_at FROM schema_migrations ORDER BY version')).rows : [];
  const known = new Set(migrations.map((m) => m.version));
  const applied = new Set(rows.map((r) => r.version));
  return {
    applied: rows.filter((r) => known.has(r.version)).map((r) => ({ version: r.version, name: r.name, appliedAt: r.applied_at })),
    pending: migrations.filter((m) => !applied.has(m.version)),
    unknown: rows.filter((r) => !known.has(r.version)).map((r) => r.version),
  };
}

/** Thrown inside a dry run's transaction so that it rolls back; never escapes {@link migrate}. */
class DryRunRollback extends Error {}

/**
 * Applies pending migrations, forward only, in one transaction under a transaction-scoped advisory
 * lock: when two processes start at once, the second waits, then sees the versions the first
 * recorded and applies nothing (graphile-worker's migrate.ts does the same with a row insert).
 * Returns the versions it applied. `dryRun` runs the same statements and rolls them back (DDL is
 * transactional in PostgreSQL): a migration that would fail on this database's data fails here,
 * and nothing changes either way.
 */
export async function migrate(db: Database, migrations = listMigrations(), opts: { dryRun?: boolean } = {}): Promise<number[]> {
  const done: number[] = [];
  try {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
      for (const v of applied) {
        if (v > latest) throw new Error(`database is at migration ${v}, newer than this build knows (${latest}); refusing to run an older Tollgate against it`);
      }
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        try {
          await tx.exec(m.sql);
        } catch (err) {
          throw new Error(`migration ${String(m.version).padStart(4, '0')}_${m.name} failed: ${(err as Error).message}`, { cause: err });
        }
        done.push(m.version);
      }
      if (opts.dryRun) throw new DryRunRollback();
    });
  } catch (err) {
    if (!(err instanceof DryRunRollback)) throw err;
  }
  return done;
}
