// Creates a new PGlite data directory, then exits:
//   node pglite-create.ts <dir> [--template <cache dir>] [--migrate]
// openPglite (pglite.ts) runs this in a short-lived child process so that the memory a new
// database costs stays out of the gateway: initdb starts a second Postgres with its own
// WebAssembly memory and copies the result as a tarball, and the migrations are the heaviest SQL
// the database ever runs. A WebAssembly memory never shrinks and the allocator keeps what the
// compilers freed, so that work left its peak in the gateway for good.
// `<dir>` is either empty (initdb here; the empty cluster is then kept as the template when one is
// given) or a copy of the template already.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { migrate } from './migrate.ts';
import { connectPglite } from './pglite.ts';
import { saveTemplate } from './pglite-template.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { template: { type: 'string' }, migrate: { type: 'boolean', default: false } },
});
const dir = positionals[0];
if (!dir || positionals.length !== 1) {
  console.error('usage: pglite-create.ts <dir> [--template <dir>] [--migrate]');
  process.exit(64);
}

if (!existsSync(join(dir, 'PG_VERSION')) && values.template) {
  // The template is the empty cluster: kept before any migration, from a closed database.
  await (await connectPglite(dir)).close();
  saveTemplate(dir, values.template);
}
const db = await connectPglite(dir);
try {
  if (values.migrate) await migrate(db);
} finally {
  await db.close();
}
process.exit(0);
