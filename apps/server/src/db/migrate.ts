import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Database } from './database.ts';

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
  const files = readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return files.map((f, i) => {
    const version = Number(f.slice(0, 4));
    if (version !== i + 1) throw new Error(`migration numbering has a gap or duplicate at ${f}`);
    return { version, name: f.slice(5, -4), sql: readFileSync(join(dir, f), 'utf8') };
  });
}

/**
 * Applies pending migrations, forward only, in one transaction under a transaction-scoped advisory
 * lock: when two processes start at once, the second waits, then sees the versions the first
 * recorded and applies nothing (graphile-worker's migrate.ts does the same with a row insert).
 * Returns the versions it applied.
 */
export async function migrate(db: Database, migrations = listMigrations()): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
    for (const v of applied) {
      if (v > latest) throw new Error(`database is at migration ${v}, newer than this build knows (${latest}); refusing to run an older Tollgate against it`);
    }
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      await tx.exec(m.sql);
      done.push(m.version);
    }
    return done;
  });
}
