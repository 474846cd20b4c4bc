import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import { listMigrations, migrate, migrationStatus } from '../../src/db/migrate.ts';
import { backends, createScratchDatabase, dropScratchDatabase, openTestDatabase } from '../helpers/db.ts';
import { env as testEnv } from '../helpers/env.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';

/** Runs one `tollgate …` to its end. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string }> {
  const p = spawnTollgate(args, env);
  const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
  return { code, out: p.output() };
}

/** `migrate`, `backup`, `restore` and `rotate-master-key` as an operator runs them, against the embedded database. */
describe('maintenance commands (embedded database)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-maint-'));
  const config = join(dir, 'tollgate.json');
  let env: Record<string, string>;
  let gw: TollgateProcess | undefined;
  let url = '';

  const serve = async (masterKey = env.MASTER_KEY!) => {
    gw = spawnTollgate(['serve', '--role', 'api'], { ...env, MASTER_KEY: masterKey });
    url = (await gw.waitFor(/listening on (http:\/\/\S+)/, 180_000))[1]!; // a first start creates the database: slow on a loaded machine
  };
  const stop = async () => {
    assert.equal(await gw!.stop(), 0, gw!.output());
    gw = undefined;
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(url + path, { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, body: (await r.json()) as any };
  };
  const signedGet = async (c: { api_key: string; api_secret: string }) => (await fetch(url + '/api/v1/merchant', { headers: signedHeaders({ apiKey: c.api_key, apiSecret: c.api_secret }) })).status;

  before(() => {
    writeFileSync(config, JSON.stringify({ environment: 'test', chains: [] }));
    env = { TOLLGATE_CONFIG: config, DATA_DIR: join(dir, 'data'), MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
  });
  after(async () => {
    await gw?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('backup refuses while a gateway runs; backup, restore --replace and rotation work once it is stopped', async () => {
    assert.match((await cli(env, 'backup', '--to', join(dir, 'none.tgz'))).out, /there is no embedded database/);
    await serve();
    const first = (await admin('POST', '/admin/v1/merchants', { name: 'Before backup' })).body;
    const running = await cli(env, 'backup', '--to', join(dir, 'b1.tgz'));
    assert.equal(running.code, 1);
    assert.match(running.out, new RegExp(`in use by process ${gw!.child.pid}`));
    assert.equal(existsSync(join(dir, 'b1.tgz')), false);
    await stop();

    const status = await cli(env, 'migrate', 'status', '--json');
    assert.equal(status.code, 0, status.out);
    assert.deepEqual(JSON.parse(status.out).pending, []);

    const b = await cli(env, 'backup', '--to', join(dir, 'b1.tgz'), '--json');
    assert.equal(b.code, 0, b.out);
    assert.equal(statSync(join(dir, 'b1.tgz')).mode & 0o777, 0o600);
    assert.ok(JSON.parse(b.out).migration > 20);
    assert.match((await cli(env, 'backup', '--to', join(dir, 'b1.tgz'))).out, /exists: choose a new file name/);

    await serve();
    const second = (await admin('POST', '/admin/v1/merchants', { name: 'After backup' })).body;
    await stop();

    writeFileSync(join(dir, 'garbage.tgz'), randomBytes(4096));
    const bad = await cli(env, 'restore', '--from', join(dir, 'garbage.tgz'), '--replace');
    assert.equal(bad.code, 1);
    assert.match(bad.out, /is not a Tollgate embedded-database backup/);
    const refused = await cli(env, 'restore', '--from', join(dir, 'b1.tgz'));
    assert.match(refused.out, /already holds a database: add --replace/);

    const r = await cli(env, 'restore', '--from', join(dir, 'b1.tgz'), '--replace', '--json');
    assert.equal(r.code, 0, r.out);
    const moved = JSON.parse(r.out).previous_database_moved_to as string;
    assert.ok(existsSync(join(moved, 'PG_VERSION')), 'the replaced database is kept');
    assert.deepEqual(
      readdirSync(join(dir, 'data')).filter((n) => n.startsWith('.')),
      [],
      'no staging directory left',
    );

    const keyFile = join(dir, 'new.key');
    const rot = await cli(env, 'rotate-master-key', '--new-key-file', keyFile, '--json');
    assert.equal(rot.code, 0, rot.out);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(JSON.parse(rot.out).new_key_created, true);
    // The restored database is the snapshot: the first merchant's key only, not the second's.
    assert.deepEqual(
      JSON.parse(rot.out).rotated.find((c: { table: string }) => c.table === 'api_keys'),
      { table: 'api_keys', column: 'secret_ciphertext', rows: 1 },
    );
    const newKey = readFileSync(keyFile, 'utf8').trim();
    assert.doesNotMatch(rot.out, new RegExp(newKey), 'the key is never printed');
    await serve(newKey);
    assert.equal(await signedGet(first), 200, 'the merchant authenticates under the new key');
    assert.equal((await admin('GET', `/admin/v1/merchants/${second.merchant_id}`)).status, 404, 'the restored database is the snapshot');
    await stop();
    const again = await cli(env, 'rotate-master-key', '--new-key-file', keyFile);
    assert.equal(again.code, 1);
    assert.match(again.out, /does not decrypt with the current MASTER_KEY/);
  });
});

describe('maintenance commands (PostgreSQL)', { skip: !testEnv.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-maint-pg-'));
  let scratch: { url: string; name: string };
  let env: Record<string, string>;
  before(async () => {
    scratch = await createScratchDatabase();
    writeFileSync(join(dir, 'tollgate.json'), JSON.stringify({ environment: 'test', chains: [] }));
    env = { TOLLGATE_CONFIG: join(dir, 'tollgate.json'), DATABASE_URL: scratch.url, MASTER_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };
  });
  after(async () => {
    await dropScratchDatabase(scratch.name);
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrate status, --dry-run and migrate on an empty database; backup points at pg_dump', async () => {
    const status = JSON.parse((await cli(env, 'migrate', 'status', '--json')).out);
    assert.equal(status.applied, 0);
    assert.ok(status.pending.length > 20);
    const dry = await cli(env, 'migrate', '--dry-run');
    assert.equal(dry.code, 0, dry.out);
    assert.match(dry.out, /nothing changed/);
    assert.deepEqual(JSON.parse((await cli(env, 'migrate', 'status', '--json')).out).pending, status.pending);
    const real = JSON.parse((await cli(env, 'migrate', '--json')).out);
    assert.deepEqual(real.applied, status.pending);
    assert.match((await cli(env, 'migrate', 'status')).out, /pending\s+none: the database is current/);
    const b = await cli(env, 'backup', '--to', join(dir, 'x.tgz'));
    assert.equal(b.code, 1);
    assert.match(b.out, /use pg_dump/);
  });
});

describe('migrate --dry-run', () => {
  for (const backend of backends()) {
    it(`runs the pending migrations and rolls them back; a failing one is named and nothing changes (${backend})`, async () => {
      const all = listMigrations();
      const t = await openTestDatabase(backend);
      try {
        // openTestDatabase migrated everything: start again from an older schema in a new one.
        await t.db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
        await migrate(t.db, all.slice(0, 5));
        const before = await migrationStatus(t.db);
        assert.deepEqual(
          before.pending.map((m) => m.version),
          all.slice(5).map((m) => m.version),
        );
        assert.deepEqual(
          await migrate(t.db, all, { dryRun: true }),
          all.slice(5).map((m) => m.version),
        );
        assert.deepEqual(
          (await migrationStatus(t.db)).pending.map((m) => m.version),
          before.pending.map((m) => m.version),
        );
        const broken = [...all, { version: all.length + 1, name: 'broken', sql: 'ALTER TABLE no_such_table ADD COLUMN x int' }];
        await assert.rejects(migrate(t.db, broken, { dryRun: true }), new RegExp(`migration ${String(all.length + 1).padStart(4, '0')}_broken failed: .*no_such_table`));
        await assert.rejects(migrate(t.db, broken), /_broken failed/);
        assert.equal((await migrationStatus(t.db, broken)).applied.length, 5, 'a failing migration leaves the database where it was');
      } finally {
        await t.drop();
      }
    });
  }
});
