import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A copy of a freshly created PGlite data directory, kept in the user's cache directory
 * (`$XDG_CACHE_HOME/tollgate` or `~/.cache/tollgate`, private to the user): a new data directory is
 * then a file copy (tens of ms) instead of an initdb (3–4 s on these machines, twice that when busy),
 * which every first `npm start` and every test starting from an empty data directory waits for.
 * Keyed by the PGlite version and the initdb options, so an upgrade or a settings change makes a
 * new one. It holds an empty cluster only (no table, no data of any gateway). Best effort: any
 * failure here falls back to initdb. `TOLLGATE_PGLITE_TEMPLATE=0` turns it off.
 */
export function templateDirFor(initdbOptions: unknown): string | undefined {
  if (process.env.TOLLGATE_PGLITE_TEMPLATE === '0') return undefined;
  try {
    const key = createHash('sha256')
      .update(`${pgliteVersion()}\n${JSON.stringify(initdbOptions)}`)
      .digest('hex')
      .slice(0, 16);
    const root = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
    return join(root, 'tollgate', `pglite-template-${key}`);
  } catch {
    return undefined;
  }
}

/** Copies the template into `target` (which must not exist); false when there is none or the copy failed. */
export function copyTemplate(template: string, target: string): boolean {
  if (!existsSync(join(template, 'PG_VERSION'))) return false;
  try {
    cpSync(template, target, { recursive: true, errorOnExist: true });
    return existsSync(join(target, 'PG_VERSION'));
  } catch {
    rmSync(target, { recursive: true, force: true });
    return false;
  }
}

/** Keeps a copy of a freshly created data directory as the template (written aside, then renamed). */
export function saveTemplate(fresh: string, template: string): void {
  const tmp = `${template}.tmp-${process.pid}`;
  try {
    if (existsSync(join(template, 'PG_VERSION'))) return;
    // a damaged template (no PG_VERSION) is replaced
    rmSync(template, { recursive: true, force: true });
    mkdirSync(dirname(template), { recursive: true, mode: 0o700 });
    cpSync(fresh, tmp, { recursive: true });
    renameSync(tmp, template);
  } catch {
    // another process saved it first, or the cache is not writable: initdb stays the way
    try {
      rmSync(tmp, { recursive: true, force: true });
    } catch {
      /* nothing was written */
    }
  }
}

function pgliteVersion(): string {
  // The package's exports do not include package.json: walk up from its entry point.
  let dir = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
  }
  throw new Error('PGlite version not found');
}
