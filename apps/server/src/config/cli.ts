import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** What the `tollgate` admin client reads from its environment (parsed here, like all config). */
export interface CliSettings {
  url: string;
  adminToken: string | undefined;
  /** Where the admin token was read from, for error messages; undefined when none was found. */
  tokenFile: string | undefined;
}

/**
 * The dev profile's `admin.token`: `<DATA_DIR>/admin.token` when DATA_DIR is set, else the first
 * `.tollgate/admin.token` in `cwd` or one of its parents. The parents matter because `npm start`
 * keeps its data in `<repo>/.tollgate` while the operator may type `npx tollgate …` from any
 * folder of the repository (the way git finds `.git`).
 */
export function findDevTokenFile(env: Record<string, string | undefined>, cwd: string): string | undefined {
  if (env.DATA_DIR) {
    const p = join(resolve(cwd, env.DATA_DIR), 'admin.token');
    return existsSync(p) ? p : undefined;
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const p = join(dir, '.tollgate', 'admin.token');
    if (existsSync(p)) return p;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * `TOLLGATE_URL` (default http://127.0.0.1:$PORT), `ADMIN_TOKEN`, else the dev profile's admin
 * token file ({@link findDevTokenFile}), so `npx tollgate merchant show demo` works next to `npm start`.
 */
export function loadCliSettings(env: Record<string, string | undefined>, cwd = process.cwd()): CliSettings {
  const url = (env.TOLLGATE_URL ?? `http://127.0.0.1:${env.PORT ?? 8402}`).replace(/\/+$/, '');
  if (env.ADMIN_TOKEN) return { url, adminToken: env.ADMIN_TOKEN, tokenFile: undefined };
  const tokenFile = findDevTokenFile(env, cwd);
  return { url, adminToken: tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined, tokenFile };
}
