import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pgliteOptions } from './pglite.ts';

/** What a snapshot holds: the latest migration recorded in it (0: none). */
export interface SnapshotInfo {
  migration: number;
}

async function latestMigration(pg: PGlite): Promise<number> {
  const t = await pg.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!t.rows[0]?.t) return 0;
  const r = await pg.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return r.rows[0]?.v ?? 0;
}

/**
 * A gzipped tarball of the embedded database in `dir` (PGlite's dumpDataDir). The caller holds
 * the data directory's lockfile, so no gateway writes while it runs: PGlite is one process per
 * directory, and a gateway that is running answers the lock with its pid instead. Opening the
 * database first replays its WAL (a gateway killed with -9 leaves one), and the CHECKPOINT puts
 * everything in the data files the tarball copies.
 */
export async function dumpPgliteDir(dir: string): Promise<{ tarball: Uint8Array } & SnapshotInfo> {
  const pg = new PGlite({ ...pgliteOptions(), dataDir: dir });
  try {
    await pg.waitReady;
    const migration = await latestMigration(pg);
    await pg.exec('CHECKPOINT');
    const blob = await pg.dumpDataDir('gzip');
    return { tarball: new Uint8Array(await blob.arrayBuffer()), migration };
  } finally {
    await pg.close();
  }
}

/**
 * Unpacks a tarball of {@link dumpPgliteDir} into `dir`, which must not hold a database. It is
 * unpacked into a sibling directory and opened there first (a truncated or foreign file fails
 * before anything is replaced), then renamed into place. `check` sees the snapshot's migration and
 * may refuse it (e.g. newer than this build).
 */
export async function loadPgliteDir(dir: string, tarball: Uint8Array, check: (info: SnapshotInfo) => void): Promise<SnapshotInfo> {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty`);
  const tmp = join(dirname(dir), `.${basename(dir)}.restore-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  let info: SnapshotInfo;
  try {
    const pg = new PGlite({ ...pgliteOptions(), dataDir: tmp, loadDataDir: new Blob([new Uint8Array(tarball)]) });
    try {
      await pg.waitReady;
      info = { migration: await latestMigration(pg) };
      check(info);
    } finally {
      await pg.close().catch(() => {});
    }
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  rmSync(dir, { recursive: true, force: true }); // an empty directory, checked above
  renameSync(tmp, dir);
  return info;
}
