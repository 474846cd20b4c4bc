// Run by `npm install` / `npm ci` (the `prepare` script): creates the embedded database's template
// (apps/server/src/db/pglite-template.ts) in the user's cache, so the first `npm start` copies a
// data directory instead of waiting for initdb. Best effort: a failure here only costs that wait.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite } from '../apps/server/src/db/pglite.ts';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-template-'));
try {
  const db = await openPglite(join(dir, 'pgdata'));
  await db.close();
} catch (err) {
  console.error(`tollgate: embedded database template not prepared (${(err as Error).message}); the first start runs initdb`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
