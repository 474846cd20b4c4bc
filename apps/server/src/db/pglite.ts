import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, types, type PGliteOptions } from '@electric-sql/pglite';
import type { Database, Queryable, QueryResult } from './database.ts';
import { alive } from './lockfile.ts';
import { copyTemplate, saveTemplate, templateDirFor } from './pglite-template.ts';

/**
 * Postgres settings of the embedded database. PGlite's defaults are a server's (shared_buffers
 * 128 MB, maintenance_work_mem 64 MB) and all of it lives in one WebAssembly memory, which never
 * shrinks: the buffer pool alone was 130 MB of the gateway's idle RSS, and a migration's index
 * build would keep its 64 MB forever. The embedded database serves one gateway on a small data set
 * and the OS page cache still holds its files, so small buffers cost little (BENCHMARKS.md,
 * "Embedded default"). PostgreSQL is the answer for more; these do not apply to it.
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '16MB',
  wal_buffers: '1MB',
  temp_buffers: '2MB',
  work_mem: '2MB',
  maintenance_work_mem: '8MB',
};

const settingArgs = Object.entries(PGLITE_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]);

function pgliteOptions(): PGliteOptions {
  return {
    startParams: [...PGlite.defaultStartParams, ...settingArgs],
    // initdb writes these into postgresql.conf and runs its bootstrap with them.
    initDbStartParams: settingArgs,
  };
}

const INITDB_SCRIPT = fileURLToPath(new URL('./pglite-initdb.mjs', import.meta.url));

/**
 * Creates the data directory `dir` when it holds no database yet: a copy of the cached template
 * (pglite-template.ts) when there is one, else initdb in a child process. The child
 * keeps initdb's memory peak (a second Postgres instance and a tarball of the result) out of this
 * process, whose WebAssembly memory would otherwise keep it. It writes a sibling directory that is
 * renamed into place once complete, so an interrupted first start leaves no half-made database.
 * A directory that exists with other content is left to PGlite, as before.
 */
async function initdbInChild(dir: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  if (existsSync(dir) && readdirSync(dir).length > 0) return;
  mkdirSync(dirname(dir), { recursive: true });
  const prefix = `.${basename(dir)}.init-`;
  // Leftovers of a first start that was killed mid-way (their process is gone): never used again.
  for (const name of readdirSync(dirname(dir))) {
    if (name.startsWith(prefix) && !alive(Number(name.slice(prefix.length)))) rmSync(join(dirname(dir), name), { recursive: true, force: true });
  }
  const tmp = join(dirname(dir), `${prefix}${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const { startParams: _unused, ...opts } = pgliteOptions();
  const template = templateDirFor(opts);
  if (template && copyTemplate(template, tmp)) return renameSync(tmp, dir);
  let stderr = '';
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [INITDB_SCRIPT, tmp, JSON.stringify(opts)], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => void (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  });
  if (code !== 0 || !existsSync(join(tmp, 'PG_VERSION'))) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`creating the embedded database in ${dir} failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
  }
  if (template) saveTemplate(tmp, template);
  // rename(2) replaces an empty directory: the `existsSync(dir)` case above.
  renameSync(tmp, dir);
}

/**
 * Embedded PGlite adapter. Quirks (measured on these machines, see DESIGN.md):
 * - single connection, single process: a second process must never open the same directory, so
 *   the caller holds a lockfile (`lockfile.ts`);
 * - `transaction()` holds the only connection, so other queries wait for it: keep transactions short;
 * - a long loop of awaited queries starves the event loop less than one might hope; callers that
 *   loop over many rows yield with `setImmediate` between batches.
 * - int8 comes back as a JS number already; numeric as string (we keep both).
 * - memory: see PGLITE_SETTINGS; a new data directory is created in a child process.
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  if (dataDir) await initdbInChild(dataDir);
  // One options object: `new PGlite(undefined, options)` ignores `options` (in-memory databases ran
  // with PGlite's defaults and without the parser below until this was noticed).
  const pg = new PGlite({
    ...pgliteOptions(),
    dataDir,
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
