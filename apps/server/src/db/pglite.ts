import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { PGlite, types, type PGliteOptions } from '@electric-sql/pglite';
import type { Database, Queryable, QueryResult } from './database.ts';
import { alive } from './lockfile.ts';
import { copyTemplate, templateDirFor } from './pglite-template.ts';

/**
 * Postgres settings of the embedded database. PGlite's defaults are a server's (shared_buffers
 * 128 MB, maintenance_work_mem 64 MB) and all of it lives in one WebAssembly memory, which never
 * shrinks: the buffer pool alone was 130 MB of the gateway's idle RSS, and a migration's index
 * build would keep its 64 MB forever. The embedded database serves one gateway on a small data set
 * and the OS page cache still holds its files, so small buffers cost little (BENCHMARKS.md,
 * "Embedded default"). PostgreSQL is the answer for more; these do not apply to it.
 */
const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '16MB',
  wal_buffers: '1MB',
  temp_buffers: '2MB',
  work_mem: '2MB',
  maintenance_work_mem: '8MB',
};

const settingArgs = Object.entries(PGLITE_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]);

export function pgliteOptions(): PGliteOptions {
  return {
    startParams: [...PGlite.defaultStartParams, ...settingArgs],
    // initdb writes these into postgresql.conf and runs its bootstrap with them.
    initDbStartParams: settingArgs,
  };
}

/** The options that shape a new cluster (no startParams): the template cache is keyed by them. */
function initdbOptions(): PGliteOptions {
  const { startParams: _unused, ...opts } = pgliteOptions();
  return opts;
}

/**
 * Runs PGlite's WebAssembly on V8's baseline compiler (Liftoff) only, for a process that keeps the
 * embedded database open: the gateway. By default V8 compiles Postgres's hot functions again with
 * its optimizing compiler, in background jobs whose working memory (tens of MB for Postgres's
 * largest functions) comes from the C allocator, which kept it after they finished. That was
 * 60–100 MB of the idle gateway, a different amount at every start, and ~100 MB more after a
 * load. Without the second tier the gateway idles at a steady ~300 MB and stays under 400 MB under
 * load, for ~0.7× the createOrder throughput on PGlite (BENCHMARKS.md, "Embedded default"): the
 * embedded database is for development and small installations, and PostgreSQL is the way to
 * throughput. PGlite is the gateway's only WebAssembly. V8 reads these flags when it compiles a
 * module, so this runs before PGlite starts.
 */
export function withoutWasmTierUp(): void {
  setFlagsFromString('--no-wasm-dynamic-tiering');
  setFlagsFromString('--no-wasm-tier-up');
}

// From source the child runs pglite-create.ts (Node strips its types), loaded by path so that it
// works from any working directory. The compiled build (scripts/build.mjs) emits pglite-create.js
// beside the chunk holding this module. Either way the child is plain node, no loader.
const COMPILED = import.meta.url.endsWith('.js');
const CREATE_SCRIPT = fileURLToPath(new URL(COMPILED ? './pglite-create.js' : './pglite-create.ts', import.meta.url));
const childArgs = (): string[] => [CREATE_SCRIPT];

export interface OpenPgliteOptions {
  /**
   * A new data directory also gets the gateway's schema (migrate.ts) in the child that creates it.
   * The migrations of a new database are its heaviest work: run here they left ~20–40 MB in the
   * gateway (WebAssembly code compiled for the DDL, the memory its compilers freed but the
   * allocator kept, pages of the WebAssembly memory that never shrinks). An existing directory is
   * migrated by the caller as before.
   */
  migrate?: boolean;
}

/**
 * Creates the data directory `dir` when it holds no database yet, in a child process: from a copy
 * of the cached template (pglite-template.ts) when there is one, else by initdb, and with the
 * migrations applied when `migrate` is set (a template copy needs no child without it). The child
 * keeps that work's memory (initdb starts a second Postgres and copies the result as a tarball)
 * out of this process, whose WebAssembly memory would otherwise keep it. It writes a sibling
 * directory that is renamed into place once complete, so an interrupted first start leaves no
 * half-made database. A directory that exists with other content is left to PGlite, as before.
 */
async function createInChild(dir: string, migrate: boolean): Promise<void> {
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
  const template = templateDirFor(initdbOptions());
  const copied = template !== undefined && copyTemplate(template, tmp);
  if (!copied || migrate) {
    const args = [...childArgs(), tmp];
    if (!copied && template) args.push('--template', template);
    if (migrate) args.push('--migrate');
    let stderr = '';
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.on('data', (d: Buffer) => void (stderr += d.toString()));
      child.once('error', reject);
      child.once('exit', (c) => resolve(c));
    });
    if (code !== 0 || !existsSync(join(tmp, 'PG_VERSION'))) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`creating the embedded database in ${dir} failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
    }
  }
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
export async function openPglite(dataDir: string | undefined, opts: OpenPgliteOptions = {}): Promise<Database> {
  if (dataDir) await createInChild(dataDir, opts.migrate === true);
  return connectPglite(dataDir);
}

/**
 * Opens PGlite on `dataDir` (in memory when undefined) in this process; a new directory gets initdb
 * here, or the contents of `loadDataDir` (a `dumpDataDir()` tarball: the tests' migrated template).
 */
export async function connectPglite(dataDir: string | undefined, loadDataDir?: Blob): Promise<Database> {
  // One options object: `new PGlite(undefined, options)` ignores `options` (in-memory databases ran
  // with PGlite's defaults and without the parser below until this was noticed).
  const pg = new PGlite({
    ...pgliteOptions(),
    dataDir,
    ...(loadDataDir ? { loadDataDir } : {}),
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
