// Creates a new PGlite data directory, then exits: `node pglite-initdb.mjs <dir> <options JSON>`.
// openPglite (pglite.ts) runs this in a short-lived child process because PGlite's initdb starts a
// second Postgres with its own WebAssembly memory and copies the result as a tarball: a peak of
// ~0.5 GB that a WebAssembly memory never gives back. Plain JavaScript, so it needs no loader.
import { PGlite } from '@electric-sql/pglite';

const [dir, json] = process.argv.slice(2);
if (!dir || !json) {
  console.error('usage: pglite-initdb.mjs <dir> <options JSON>');
  process.exit(64);
}
const pg = new PGlite(dir, JSON.parse(json));
await pg.waitReady;
await pg.close();
process.exit(0);
