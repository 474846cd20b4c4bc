import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { openPglite, pgliteOptions } from '../../src/db/pglite.ts';
import { templateDirFor } from '../../src/db/pglite-template.ts';
import { openPostgres } from '../../src/db/postgres.ts';

/**
 * Migrated-schema templates for test databases. A fresh test database used to be an initdb (PGlite:
 * ~3 s of CPU in WebAssembly, more than anything else a typical integration file does) followed by
 * every migration; now it is a copy of a database that already had them, made once per schema:
 * - PGlite: a `dumpDataDir()` tarball of a database created as the gateway creates its own
 *   (openPglite with `migrate`), kept beside the empty-cluster template in the user's cache and
 *   loaded into each in-memory database (~0.4–0.8 s of CPU);
 * - PostgreSQL: a database `tg_tpl_<schema>` on the TEST_DATABASE_URL server, copied by
 *   `CREATE DATABASE … TEMPLATE`.
 * Both are keyed by the migrations' names and text, so a new or edited migration makes a new one.
 * Tests of migrations themselves (db.test.ts, the CLI) still start from empty databases.
 */
const schemaKey = (() => {
  const h = createHash('sha256');
  for (const m of listMigrations()) h.update(`${m.version}\0${m.name}\0${m.sql}\0`);
  return h.digest('hex').slice(0, 16);
})();

let tarball: Promise<Blob> | undefined;

/** The migrated PGlite data directory as a tarball (read from the cache, or made and cached). */
export function pgliteTemplate(): Promise<Blob> {
  tarball ??= loadOrMakeTarball().catch((err) => {
    tarball = undefined;
    throw err;
  });
  return tarball;
}

async function loadOrMakeTarball(): Promise<Blob> {
  // Keyed by PGlite's version and every start option too (templateDirFor hashes them).
  const dir = templateDirFor(pgliteOptions());
  const file = dir ? `${dir}-schema-${schemaKey}.tar` : undefined;
  if (file && existsSync(file)) return new Blob([readFileSync(file)]);
  const root = mkdtempSync(join(tmpdir(), 'tg-pglite-tpl-'));
  try {
    await (await openPglite(join(root, 'data'), { migrate: true })).close();
    const pgl = new PGlite({ ...pgliteOptions(), dataDir: join(root, 'data') });
    await pgl.waitReady; // dumpDataDir before this never settles
    const blob = await pgl.dumpDataDir('none');
    await pgl.close();
    if (file) {
      // Written aside and renamed: a concurrent test process reads a whole file or none.
      const tmp = `${file}.tmp-${process.pid}`;
      try {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        writeFileSync(tmp, Buffer.from(await blob.arrayBuffer()), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        rmSync(tmp, { force: true }); // cache not writable: this process keeps its copy in memory
      }
    }
    return blob;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// Serialises the making of a PostgreSQL template across the test processes sharing the server.
const TEMPLATE_LOCK = 7_402_900;

/**
 * Creates a new PostgreSQL database with every migration applied, as a copy of the schema's
 * template database (made first when the server has none). Returns its name.
 */
export async function createMigratedPostgres(baseUrl: string): Promise<string> {
  const template = `tg_tpl_${schemaKey}`;
  const name = `tg_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    if (!(await databaseExists(admin, template))) {
      await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
      try {
        if (!(await databaseExists(admin, template))) await makeTemplate(admin, baseUrl, template);
      } finally {
        await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
      }
    }
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  return name;
}

async function databaseExists(admin: pg.Client, name: string): Promise<boolean> {
  const { rows } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return rows.length > 0;
}

/** Migrates a database under another name, then renames it: a template exists only complete. */
async function makeTemplate(admin: pg.Client, baseUrl: string, template: string): Promise<void> {
  const building = `${template}_b${randomBytes(3).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${building}`);
  try {
    const u = new URL(baseUrl);
    u.pathname = `/${building}`;
    const db = await openPostgres(u.toString(), { max: 1 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
  } catch (err) {
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`).catch(() => {});
    throw err;
  }
}
