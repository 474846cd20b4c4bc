// A new embedded data directory is a copy of a cached, freshly created one (db/pglite-template.ts)
// instead of an initdb: the first start's biggest wait. The copy must be a working database with
// the embedded settings, private to its directory, and any problem with the cache falls back to
// initdb.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listMigrations } from '../../src/db/migrate.ts';
import { openPglite } from '../../src/db/pglite.ts';

describe('embedded database template', () => {
  let root: string;
  const saved = { xdg: process.env.XDG_CACHE_HOME, off: process.env.TOLLGATE_PGLITE_TEMPLATE };
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'tg-template-'));
    process.env.XDG_CACHE_HOME = join(root, 'cache');
    delete process.env.TOLLGATE_PGLITE_TEMPLATE;
  });
  after(() => {
    for (const [k, v] of [
      ['XDG_CACHE_HOME', saved.xdg],
      ['TOLLGATE_PGLITE_TEMPLATE', saved.off],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(root, { recursive: true, force: true });
  });

  const templates = () => (existsSync(join(root, 'cache', 'tollgate')) ? readdirSync(join(root, 'cache', 'tollgate')) : []);
  async function roundTrip(dir: string, n: number) {
    const db = await openPglite(dir);
    try {
      const s = await db.query<{ sb: string }>("SELECT current_setting('shared_buffers') AS sb");
      assert.equal(s.rows[0]!.sb, '16MB', 'the embedded settings are in the copy');
      assert.deepEqual((await db.query('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', ['public'])).rows, [{ n: 0 }], 'an empty cluster');
      await db.exec(`CREATE TABLE t (n int); INSERT INTO t VALUES (${n})`);
    } finally {
      await db.close();
    }
  }

  it('the first new directory saves the template; the next is a copy, faster, and independent', { timeout: 120_000 }, async () => {
    const t0 = performance.now();
    await roundTrip(join(root, 'a', 'pgdata'), 1);
    const initdbMs = performance.now() - t0;
    assert.equal(templates().length, 1, 'one template saved');
    assert.equal(statSync(join(root, 'cache', 'tollgate')).mode & 0o077, 0, 'the cache directory is private to the user');

    const t1 = performance.now();
    await roundTrip(join(root, 'b', 'pgdata'), 2);
    const copyMs = performance.now() - t1;
    assert.ok(copyMs < initdbMs, `the copy (${copyMs.toFixed(0)} ms) is faster than initdb (${initdbMs.toFixed(0)} ms)`);
    // Each directory has its own data; the template stays an empty cluster.
    for (const [dir, n] of [
      ['a', 1],
      ['b', 2],
    ] as const) {
      const db = await openPglite(join(root, dir, 'pgdata'));
      try {
        assert.deepEqual((await db.query('SELECT n FROM t')).rows, [{ n }]);
      } finally {
        await db.close();
      }
    }
    await roundTrip(join(root, 'c', 'pgdata'), 3);
  });

  it('a broken template (no PG_VERSION) or TOLLGATE_PGLITE_TEMPLATE=0 falls back to initdb', { timeout: 120_000 }, async () => {
    const [name] = templates();
    assert.ok(name);
    rmSync(join(root, 'cache', 'tollgate', name, 'PG_VERSION'));
    await roundTrip(join(root, 'd', 'pgdata'), 4);
    assert.ok(existsSync(join(root, 'd', 'pgdata', 'PG_VERSION')));
    assert.ok(existsSync(join(root, 'cache', 'tollgate', name, 'PG_VERSION')), 'the damaged template was replaced');

    process.env.TOLLGATE_PGLITE_TEMPLATE = '0';
    rmSync(join(root, 'cache'), { recursive: true, force: true });
    await roundTrip(join(root, 'e', 'pgdata'), 5);
    assert.deepEqual(templates(), [], 'nothing cached when turned off');

    // A cache path that cannot be written (a file where the directory should be): initdb still works.
    delete process.env.TOLLGATE_PGLITE_TEMPLATE;
    writeFileSync(join(root, 'cache'), 'not a directory');
    await roundTrip(join(root, 'f', 'pgdata'), 6);
    assert.ok(existsSync(join(root, 'f', 'pgdata', 'PG_VERSION')));
  });

  it('a directory opened with `migrate` gets the whole schema from the child; the template stays an empty cluster', { timeout: 120_000 }, async () => {
    rmSync(join(root, 'cache'), { recursive: true, force: true });
    const versions = listMigrations().map((m) => m.version);
    const schemaOf = async (dir: string) => {
      const db = await openPglite(dir);
      try {
        const t = await db.query<{ t: string | null }>("SELECT to_regclass('public.schema_migrations')::text AS t");
        if (t.rows[0]!.t === null) return null;
        return (await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
      } finally {
        await db.close();
      }
    };
    // No template yet: the child runs initdb, keeps the empty cluster as the template, then migrates.
    const g = join(root, 'g', 'pgdata');
    await (await openPglite(g, { migrate: true })).close();
    assert.deepEqual(await schemaOf(g), versions);
    const [name] = templates();
    assert.ok(name, 'the template was saved');
    assert.equal(await schemaOf(join(root, 'cache', 'tollgate', name)), null, 'the template holds no schema');
    // From the template: a copy, migrated by the child.
    const h = join(root, 'h', 'pgdata');
    await (await openPglite(h, { migrate: true })).close();
    assert.deepEqual(await schemaOf(h), versions);
    assert.deepEqual(readdirSync(join(root, 'h')), ['pgdata'], 'nothing left beside the new directory');
    // An existing directory is not the child's business: `migrate` leaves it as it is.
    const e = join(root, 'e', 'pgdata');
    await (await openPglite(e, { migrate: true })).close();
    assert.equal(await schemaOf(e), null);
  });
});
