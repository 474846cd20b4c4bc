import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../../src/db/database.ts';
import { connectPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createMigratedPostgres, pgliteTemplate } from './db-template.ts';
import { env } from './env.ts';

export type Backend = 'pglite' | 'postgres';

/**
 * The backends every database test runs on: PGlite always; Postgres when TEST_DATABASE_URL is set.
 * With TOLLGATE_TEST_STRICT=1 (CI), a missing TEST_DATABASE_URL is a failure, not a silent skip.
 */
export function backends(): Backend[] {
  if (env.TEST_DATABASE_URL) return ['pglite', 'postgres'];
  if (env.TOLLGATE_TEST_STRICT === '1') throw new Error('TOLLGATE_TEST_STRICT=1 but TEST_DATABASE_URL is not set: Postgres tests cannot run');
  return ['pglite'];
}

export interface TestDatabase {
  db: Database;
  /** The URL of the fresh Postgres database (undefined for PGlite). */
  url: string | undefined;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database: in-memory PGlite, or a new Postgres database dropped afterwards. Both
 * are copies of a migrated template (db-template.ts), not an initdb and a migration run each.
 */
export async function openTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const db = await connectPglite(undefined, await pgliteTemplate());
    return { db, url: undefined, drop: () => db.close() };
  }
  const base = env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = await createMigratedPostgres(base);
  const u = new URL(base);
  u.pathname = `/${name}`;
  const url = u.toString();
  const db = await openPostgres(url, { max: 10 }).catch(async (err) => {
    await dropScratchDatabase(name);
    throw err;
  });
  return {
    db,
    url,
    drop: async () => {
      await db.close().catch(() => {});
      await dropScratchDatabase(name);
    },
  };
}

/** Creates an empty Postgres database for one test file (no migrations applied). */
export async function createScratchDatabase(): Promise<{ url: string; name: string }> {
  const base = env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = `tg_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(base);
  u.pathname = `/${name}`;
  return { url: u.toString(), name };
}

export async function dropScratchDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
