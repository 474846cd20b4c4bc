import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** What the `tollgate` admin client reads from its environment (parsed here, like all config). */
export interface CliSettings {
  url: string;
  adminToken: string | undefined;
}

/**
 * `TOLLGATE_URL` (default http://127.0.0.1:$PORT), `ADMIN_TOKEN`, else the dev profile's
 * `<DATA_DIR>/admin.token`, so `npx tollgate merchant show demo` works next to `npm start`.
 */
export function loadCliSettings(env: Record<string, string | undefined>, cwd = process.cwd()): CliSettings {
  const url = (env.TOLLGATE_URL ?? `http://127.0.0.1:${env.PORT ?? 8402}`).replace(/\/+$/, '');
  let adminToken = env.ADMIN_TOKEN || undefined;
  const tokenFile = join(resolve(cwd, env.DATA_DIR ?? '.tollgate'), 'admin.token');
  if (!adminToken && existsSync(tokenFile)) adminToken = readFileSync(tokenFile, 'utf8').trim();
  return { url, adminToken };
}
