import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Database } from '../../src/db/database.ts';
import { acquireDataDirLock, DataDirLockedError } from '../../src/db/lockfile.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { openDatabase } from '../../src/db/open.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { backends, createScratchDatabase, dropScratchDatabase, openTestDatabase } from '../helpers/db.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tollgate-db-'));
  dirs.push(d);
  return d;
}

/** A directory of migration files (name → SQL). */
function migrationsDir(files: Record<string, string>): string {
  const d = tempDir();
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(d, name), sql);
  return d;
}

async function appliedVersions(db: Database): Promise<number[]> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.version);
}

/** A live process that is not this one (its pid goes in a lock file). */
function spawnSleeper(): ChildProcess {
  return spawn('sleep', ['30'], { stdio: 'ignore' });
}

describe('listMigrations', () => {
  it('the shipped migrations are numbered densely from 1 with names', () => {
    const ms = listMigrations();
    assert.ok(ms.length >= 1);
    ms.forEach((m, i) => {
      assert.equal(m.version, i + 1);
      assert.match(m.name, /^[a-z0-9_]+$/);
      assert.ok(m.sql.trim().length > 0, `${m.version} is empty`);
    });
    assert.equal(ms[0]!.name, 'foundation');
  });

  it('sorts by number and ignores files that are not migrations', () => {
    const d = migrationsDir({
      '0002_second.sql': 'SELECT 2;',
      '0001_first.sql': 'SELECT 1;',
      'README.md': '# notes',
      '0003_Bad-Name.sql': 'SELECT 3;',
      '3_short.sql': 'SELECT 3;',
      '0004_no_ext.txt': 'SELECT 4;',
    });
    assert.deepEqual(
      listMigrations(d).map((m) => [m.version, m.name, m.sql]),
      [
        [1, 'first', 'SELECT 1;'],
        [2, 'second', 'SELECT 2;'],
      ],
    );
  });

  it('a gap in the numbering is an error naming the file', () => {
    const d = migrationsDir({ '0001_a.sql': 'SELECT 1;', '0003_c.sql': 'SELECT 3;' });
    assert.throws(() => listMigrations(d), /gap or duplicate at 0003_c\.sql/);
  });

  it('a duplicate number is an error', () => {
    const d = migrationsDir({ '0001_a.sql': 'SELECT 1;', '0001_b.sql': 'SELECT 1;' });
    assert.throws(() => listMigrations(d), /gap or duplicate at 0001_b\.sql/);
  });

  it('numbering must start at 1', () => {
    const d = migrationsDir({ '0002_b.sql': 'SELECT 1;' });
    assert.throws(() => listMigrations(d), /0002_b\.sql/);
  });

  it('an empty directory has no migrations', () => {
    assert.deepEqual(listMigrations(tempDir()), []);
  });
});

for (const backend of backends()) {
  describe(`migrate (${backend})`, () => {
    it('applies nothing the second time', async () => {
      const t = await openTestDatabase(backend); // already migrated once
      try {
        const all = listMigrations().map((m) => m.version);
        assert.deepEqual(await appliedVersions(t.db), all);
        assert.deepEqual(await migrate(t.db), []);
        assert.deepEqual(await migrate(t.db), []);
        assert.deepEqual(await appliedVersions(t.db), all);
      } finally {
        await t.drop();
      }
    });

    it('applies only the pending migrations, and records them with their names', async () => {
      const t = await openTestDatabase(backend);
      try {
        const shipped = listMigrations();
        const next = shipped.length + 1;
        const extra = [...shipped, { version: next, name: 'test_extra', sql: 'CREATE TABLE test_extra (id integer PRIMARY KEY);' }];
        assert.deepEqual(await migrate(t.db, extra), [next]);
        assert.deepEqual(await migrate(t.db, extra), []);
        const { rows } = await t.db.query<{ name: string }>('SELECT name FROM schema_migrations WHERE version = $1', [next]);
        assert.deepEqual(rows, [{ name: 'test_extra' }]);
        await t.db.query('INSERT INTO test_extra (id) VALUES (1)');
      } finally {
        await t.drop();
      }
    });

    it('a failing migration rolls back entirely: no version row, no partial schema', async () => {
      const t = await openTestDatabase(backend);
      try {
        const shipped = listMigrations();
        const next = shipped.length + 1;
        const bad = [...shipped, { version: next, name: 'broken', sql: 'CREATE TABLE half_done (id integer); SELECT no_such_function();' }];
        await assert.rejects(migrate(t.db, bad), /no_such_function/);
        assert.deepEqual(
          await appliedVersions(t.db),
          shipped.map((m) => m.version),
        );
        const { rows } = await t.db.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`);
        assert.equal(rows.length, 0);
      } finally {
        await t.drop();
      }
    });

    it('a database newer than the code fails with a clear error and changes nothing', async () => {
      const t = await openTestDatabase(backend);
      try {
        const latest = listMigrations().length;
        await t.db.query(`INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_the_future')`, [latest + 5]);
        await assert.rejects(migrate(t.db), (err: Error) => {
          assert.match(err.message, new RegExp(`database is at migration ${latest + 5}, newer than this build knows \\(${latest}\\)`));
          return true;
        });
        // Even with pending migrations of its own, an old build applies none of them.
        const { rowCount } = await t.db.query('DELETE FROM schema_migrations WHERE version = 1');
        assert.equal(rowCount, 1);
        await assert.rejects(migrate(t.db), /newer than this build/);
        assert.deepEqual(await appliedVersions(t.db), [
          ...listMigrations()
            .slice(1)
            .map((m) => m.version),
          latest + 5,
        ]);
      } finally {
        await t.drop();
      }
    });
  });
}

if (backends().includes('postgres')) {
  describe('migrate: concurrent processes (postgres)', () => {
    it('two migrators on one fresh database both succeed and record each version once', async () => {
      const { url, name } = await createScratchDatabase();
      // Separate pools stand for separate processes; a slow migration makes them overlap.
      const a = await openPostgres(url, { max: 2 });
      const b = await openPostgres(url, { max: 2 });
      try {
        const shipped = listMigrations();
        const slow = [...shipped, { version: shipped.length + 1, name: 'slow', sql: 'SELECT pg_sleep(0.3); CREATE TABLE slow_marker (id integer);' }];
        const [ra, rb] = await Promise.all([migrate(a, slow), migrate(b, slow)]);
        const all = slow.map((m) => m.version);
        // One of them applied everything, the other nothing.
        assert.deepEqual(
          [ra, rb].sort((x, y) => y.length - x.length),
          [all, []],
        );
        const { rows } = await a.query<{ version: number; n: number }>('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version');
        assert.deepEqual(
          rows,
          all.map((v) => ({ version: v, n: 1 })),
        );
        assert.deepEqual(await migrate(b, slow), []);
      } finally {
        await a.close();
        await b.close();
        await dropScratchDatabase(name);
      }
    });

    it('five migrators at once, with the shipped migrations', async () => {
      const { url, name } = await createScratchDatabase();
      const pools = await Promise.all(Array.from({ length: 5 }, () => openPostgres(url, { max: 1 })));
      try {
        const results = await Promise.all(pools.map((p) => migrate(p)));
        const all = listMigrations().map((m) => m.version);
        assert.equal(results.filter((r) => r.length > 0).length, 1, JSON.stringify(results));
        assert.deepEqual(await appliedVersions(pools[0]!), all);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
        await dropScratchDatabase(name);
      }
    });
  });
}

describe('data directory lock', () => {
  it('a lock held by another live process is refused, naming its pid', async (t) => {
    const dir = tempDir();
    const other = spawnSleeper();
    t.after(() => void other.kill());
    assert.ok(other.pid);
    writeFileSync(join(dir, 'tollgate.lock'), String(other.pid));
    assert.throws(
      () => acquireDataDirLock(dir),
      (err: unknown) => {
        assert.ok(err instanceof DataDirLockedError);
        assert.match(err.message, new RegExp(`in use by process ${other.pid}\\b`));
        assert.ok(err.message.includes(dir));
        return true;
      },
    );
    assert.equal(readFileSync(join(dir, 'tollgate.lock'), 'utf8'), String(other.pid), 'the other process keeps its lock');
  });

  it('takes the lock in a fresh directory (created if missing), writing its pid with mode 0600', () => {
    const dir = join(tempDir(), 'nested', 'data');
    const release = acquireDataDirLock(dir);
    const lock = join(dir, 'tollgate.lock');
    assert.equal(readFileSync(lock, 'utf8'), String(process.pid));
    assert.equal(statSync(lock).mode & 0o777, 0o600);
    release();
    assert.equal(existsSync(lock), false);
    release(); // idempotent
  });

  it('acquiring twice in one process is refused while the first is held', () => {
    const dir = tempDir();
    const release = acquireDataDirLock(dir);
    try {
      assert.throws(() => acquireDataDirLock(dir), DataDirLockedError);
    } finally {
      release();
    }
    const again = acquireDataDirLock(dir);
    again();
  });

  it('a stale lock (dead pid) is taken over', async () => {
    const dir = tempDir();
    const dead = spawnSleeper();
    const pid = dead.pid!;
    await new Promise<void>((resolve) => {
      dead.on('exit', () => resolve());
      dead.kill('SIGKILL');
    });
    writeFileSync(join(dir, 'tollgate.lock'), String(pid));
    const release = acquireDataDirLock(dir);
    assert.equal(readFileSync(join(dir, 'tollgate.lock'), 'utf8'), String(process.pid));
    release();
  });

  it('a lock file with garbage or this process’s recycled pid is taken over', () => {
    // A container restarted after kill -9 gets the same pid (often 1) as the process that left the lock.
    for (const content of ['', 'not a pid', '-5', String(process.pid)]) {
      const dir = tempDir();
      writeFileSync(join(dir, 'tollgate.lock'), content);
      const release = acquireDataDirLock(dir);
      assert.equal(readFileSync(join(dir, 'tollgate.lock'), 'utf8'), String(process.pid), JSON.stringify(content));
      release();
    }
  });
});

describe('openDatabase (embedded PGlite in a data directory)', () => {
  it('creates the store, migrates it, and refuses a second open while the first is open', async () => {
    const dir = join(tempDir(), 'data');
    const first = await openDatabase({ dataDir: dir });
    let closed = false;
    try {
      assert.equal(first.kind, 'pglite');
      assert.ok(statSync(join(dir, 'pgdata')).isDirectory(), 'pgdata created');
      assert.equal(readFileSync(join(dir, 'tollgate.lock'), 'utf8'), String(process.pid));
      assert.deepEqual(
        await appliedVersions(first),
        listMigrations().map((m) => m.version),
      );
      await first.query(`INSERT INTO merchants (id, name) VALUES ('persisted', 'Persisted')`);

      await assert.rejects(openDatabase({ dataDir: dir }), DataDirLockedError);
      // The refused open left the first one working and its lock in place.
      assert.equal((await first.query('SELECT 1 AS one')).rows.length, 1);
      assert.ok(existsSync(join(dir, 'tollgate.lock')));

      await first.close();
      closed = true;
      assert.equal(existsSync(join(dir, 'tollgate.lock')), false, 'close releases the lock');

      const second = await openDatabase({ dataDir: dir });
      try {
        const { rows } = await second.query<{ name: string }>(`SELECT name FROM merchants WHERE id = 'persisted'`);
        assert.deepEqual(rows, [{ name: 'Persisted' }], 'data survives a reopen');
        assert.deepEqual(await migrate(second), []);
      } finally {
        await second.close();
      }
    } finally {
      if (!closed) await first.close();
    }
  });

  it('refuses a directory locked by another live process', async (t) => {
    const dir = tempDir();
    const other = spawnSleeper();
    t.after(() => void other.kill());
    writeFileSync(join(dir, 'tollgate.lock'), String(other.pid));
    await assert.rejects(openDatabase({ dataDir: dir }), (err: Error) => err instanceof DataDirLockedError && err.message.includes(String(other.pid)));
    assert.equal(existsSync(join(dir, 'pgdata')), false, 'the store is not touched');
  });

  it('a failed migration on open closes the store and releases the lock', async () => {
    const dir = tempDir();
    const pg = await openPglite(join(dir, 'pgdata'));
    await migrate(pg);
    await pg.query(`INSERT INTO schema_migrations (version, name) VALUES (9999, 'from_the_future')`);
    await pg.close();
    await assert.rejects(openDatabase({ dataDir: dir }), /newer than this build/);
    assert.equal(existsSync(join(dir, 'tollgate.lock')), false, 'lock released after the failed open');
    // The directory can be opened again (by a fixed build): the lock is free.
    const release = acquireDataDirLock(dir);
    release();
  });

  it('with a database URL, no data directory or lock is used', { skip: !backends().includes('postgres') }, async () => {
    const { url, name } = await createScratchDatabase();
    const dir = join(tempDir(), 'unused');
    try {
      const db = await openDatabase({ databaseUrl: url, dataDir: dir });
      try {
        assert.equal(db.kind, 'postgres');
        assert.deepEqual(
          await appliedVersions(db),
          listMigrations().map((m) => m.version),
        );
      } finally {
        await db.close();
      }
      assert.equal(existsSync(dir), false);
    } finally {
      await dropScratchDatabase(name);
    }
  });

  it('a wrong database URL fails at open, not at the first request', async () => {
    await assert.rejects(openPostgres('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMillis: 1000 }));
  });
});
