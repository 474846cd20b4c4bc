import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { acquireDataDirLock } from '../db/lockfile.ts';
import { listMigrations } from '../db/migrate.ts';
import { dumpPgliteDir, loadPgliteDir } from '../db/pglite-backup.ts';

/** A refusal of backup or restore: nothing was written. */
export class BackupError extends Error {}

const PGDATA = 'pgdata';

/**
 * `tollgate backup --to FILE` for the embedded database: a consistent snapshot taken under the data
 * directory's lockfile, so it refuses while a gateway runs on that directory (the lock names its
 * pid) rather than copying files under a writer. PostgreSQL is backed up with its own tools
 * (pg_dump; docs/operations.md). The file holds the secrets' ciphertext, never MASTER_KEY: a
 * backup restores only with the key it was written under, which the operator keeps elsewhere.
 */
export async function backupEmbedded(dataDir: string, file: string): Promise<{ bytes: number; migration: number }> {
  if (existsSync(file)) throw new BackupError(`${file} exists: choose a new file name (a backup never overwrites)`);
  if (!existsSync(join(dataDir, PGDATA, 'PG_VERSION'))) throw new BackupError(`there is no embedded database in ${join(dataDir, PGDATA)}`);
  const release = acquireDataDirLock(dataDir);
  try {
    const { tarball, migration } = await dumpPgliteDir(join(dataDir, PGDATA));
    // Written beside the target and renamed once complete and flushed: a crash mid-way leaves no
    // file that looks like a backup. 0600: the snapshot holds merchants' data.
    const tmp = `${file}.partial-${process.pid}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, tarball);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    return { bytes: tarball.byteLength, migration };
  } finally {
    release();
  }
}

/**
 * `tollgate restore --from FILE`: the snapshot becomes the embedded database of `dataDir`. Refuses
 * while a gateway runs (lockfile), when the snapshot is newer than this build's migrations (start
 * the Tollgate that wrote it, or a later one), and when a database exists unless `replace` is set;
 * then the existing one is moved aside (its new name is returned), never deleted.
 */
export async function restoreEmbedded(dataDir: string, file: string, opts: { replace?: boolean } = {}): Promise<{ migration: number; movedAside?: string }> {
  let tarball: Uint8Array;
  try {
    tarball = readFileSync(file);
  } catch (err) {
    throw new BackupError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const release = acquireDataDirLock(dataDir);
  try {
    const dir = join(dataDir, PGDATA);
    const exists = existsSync(dir) && readdirSync(dir).length > 0;
    if (exists && !opts.replace) throw new BackupError(`${dir} already holds a database: add --replace to move it aside and restore over it`);
    const latest = listMigrations().at(-1)?.version ?? 0;
    const check = ({ migration }: { migration: number }) => {
      if (migration > latest) throw new BackupError(`the backup is at migration ${migration}, newer than this build knows (${latest}): restore it with that Tollgate version or a later one`);
    };
    // The snapshot is unpacked and opened beside the database first, so a bad file fails here
    // with the existing database untouched.
    const staged = join(dataDir, `.restore-staged-${process.pid}`);
    rmSync(staged, { recursive: true, force: true });
    let info;
    try {
      info = await loadPgliteDir(staged, tarball, check);
    } catch (err) {
      rmSync(staged, { recursive: true, force: true });
      if (err instanceof BackupError) throw err;
      throw new BackupError(`${file} is not a Tollgate embedded-database backup (${(err as Error).message.split('\n')[0]})`);
    }
    let movedAside: string | undefined;
    if (exists) {
      movedAside = join(dataDir, `${PGDATA}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      renameSync(dir, movedAside);
    } else {
      rmSync(dir, { recursive: true, force: true });
    }
    renameSync(staged, dir);
    return { migration: info.migration, ...(movedAside ? { movedAside } : {}) };
  } finally {
    release();
  }
}
