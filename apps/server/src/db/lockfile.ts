import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Another process holds the embedded database. */
export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`the embedded database in ${dataDir} is in use by process ${pid}. PGlite allows one process per ` + `directory: stop that process, use another DATA_DIR, or set DATABASE_URL to share PostgreSQL.`);
    this.name = 'DataDirLockedError';
  }
}

/** True while process `pid` exists (also when it belongs to another user). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Lock files this process holds. The pid check below cannot tell "this process already holds it"
// from "a previous process with our recycled pid left it" (a restarted container is pid 1 again),
// so the first case is answered from memory: a second open in one process would otherwise run two
// PGlite instances on one directory.
const held = new Set<string>();

/**
 * Takes `<dataDir>/tollgate.lock` (O_EXCL). PGlite has no locking of its own and two processes on
 * one directory corrupt it. A lock left by a dead process (kill -9) is taken over.
 * Returns the release function.
 */
export function acquireDataDirLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'tollgate.lock');
  if (held.has(path)) throw new DataDirLockedError(dataDir, process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      held.add(path);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held.delete(path);
        rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) throw new DataDirLockedError(dataDir, pid);
      rmSync(path, { force: true }); // stale: its owner is gone
    }
  }
  throw new Error(`could not take the lock ${path}`);
}
