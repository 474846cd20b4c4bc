import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { DataDirLockedError } from '../db/lockfile.ts';
import { migrate, migrationStatus } from '../db/migrate.ts';
import { NoDatabaseError, openForMaintenance } from '../db/open.ts';
import { BackupError, backupEmbedded, restoreEmbedded } from '../ops/backup.ts';
import { RotationError, rotateMasterKey } from '../ops/rotate-master-key.ts';
import { CliError } from './client.ts';
import { print } from './print.ts';

/** These commands work on the database directly (no running gateway), with the gateway's own config. */
function config(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
}

async function withDb<T>(c: Config, fn: (db: Awaited<ReturnType<typeof openForMaintenance>>) => Promise<T>): Promise<T> {
  let db;
  try {
    db = await openForMaintenance({ databaseUrl: c.databaseUrl, dataDir: c.dataDir });
  } catch (err) {
    if (err instanceof DataDirLockedError || err instanceof NoDatabaseError) throw new CliError(err.message);
    throw new CliError(`cannot open the database: ${(err as Error).message}`);
  }
  try {
    return await fn(db);
  } finally {
    await db.close().catch(() => {});
  }
}

export async function runMaintenanceCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      to: { type: 'string' },
      from: { type: 'string' },
      replace: { type: 'boolean', default: false },
      'new-key-file': { type: 'string' },
    },
  });
  const [cmd, sub] = pos;
  const c = config();
  if (cmd === 'migrate') return migrateCommand(c, sub, o['dry-run']!, o.json!);
  if (cmd === 'backup' || cmd === 'restore') {
    if (c.databaseUrl) {
      throw new CliError(`${cmd} covers the embedded database; this deployment uses PostgreSQL (DATABASE_URL): use pg_dump / pg_restore (docs/operations.md, "Backups")`);
    }
    try {
      if (cmd === 'backup') {
        if (!o.to) throw new CliError('missing --to FILE');
        const r = await backupEmbedded(c.dataDir, resolve(o.to));
        return print({ backup: resolve(o.to), bytes: r.bytes, migration: r.migration }, o.json!);
      }
      if (!o.from) throw new CliError('missing --from FILE');
      const r = await restoreEmbedded(c.dataDir, resolve(o.from), { replace: o.replace! });
      return print({ restored: resolve(o.from), data_dir: c.dataDir, migration: r.migration, ...(r.movedAside ? { previous_database_moved_to: r.movedAside } : {}) }, o.json!);
    } catch (err) {
      if (err instanceof BackupError || err instanceof DataDirLockedError) throw new CliError(err.message);
      throw err;
    }
  }
  if (cmd === 'rotate-master-key') return rotateCommand(c, o['new-key-file'], o.json!);
  throw new CliError(`unknown command ${cmd}`);
}

async function migrateCommand(c: Config, sub: string | undefined, dryRun: boolean, json: boolean): Promise<void> {
  if (sub !== undefined && sub !== 'status') throw new CliError(`unknown migrate command ${sub}`);
  await withDb(c, async (db) => {
    const s = await migrationStatus(db);
    const name = (m: { version: number; name: string }) => `${String(m.version).padStart(4, '0')}_${m.name}`;
    if (s.unknown.length > 0) {
      throw new CliError(`the database has migration(s) ${s.unknown.join(', ')} that this build does not know: a newer Tollgate migrated it. Run that version (migrations are forward-only).`);
    }
    if (sub === 'status') {
      const out = { applied: s.applied.length, latest_applied: s.applied.at(-1) ? name(s.applied.at(-1)!) : null, pending: s.pending.map(name) };
      if (json) return print(out, true);
      console.log(`applied   ${out.applied} (latest ${out.latest_applied ?? 'none'})`);
      console.log(s.pending.length ? `pending   ${out.pending.join(', ')}` : 'pending   none: the database is current');
      return;
    }
    if (s.pending.length === 0) return print({ applied: [], dry_run: dryRun, message: 'the database is current' }, json);
    const t0 = Date.now();
    const done = await migrate(db, undefined, { dryRun });
    print({ [dryRun ? 'would_apply' : 'applied']: s.pending.filter((m) => done.includes(m.version)).map(name), dry_run: dryRun, ms: Date.now() - t0 }, json);
    if (dryRun && !json) console.log('\nDry run: every pending migration ran and was rolled back; nothing changed.');
  });
}

/**
 * The new key comes from a file, never from an argument (visible in `ps`) or a prompt. A missing
 * file gets a new random key (mode 0600), so an operator never has to make one by hand. The dev
 * profile's own key file (.tollgate/master.key, no MASTER_KEY) is replaced after the commit, or
 * its next start could not read anything.
 */
async function rotateCommand(c: Config, keyFile: string | undefined, json: boolean): Promise<void> {
  if (!keyFile) throw new CliError('missing --new-key-file FILE (it is created with a new key when it does not exist)');
  const path = resolve(keyFile);
  let created = false;
  if (!existsSync(path)) {
    const fd = openSync(path, 'wx', 0o600);
    writeSync(fd, randomBytes(32).toString('hex') + '\n');
    closeSync(fd);
    created = true;
  }
  const hex = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new CliError(`${path} must hold 64 hex characters (32 bytes)`);
  const devKeyFile = process.env.MASTER_KEY ? undefined : join(c.dataDir, 'master.key');
  const result = await withDb(c, async (db) => {
    const s = await migrationStatus(db);
    if (s.pending.length > 0 || s.unknown.length > 0) throw new CliError("the database is not at this build's migrations: run `tollgate migrate status` first");
    try {
      return await rotateMasterKey(db, c.masterKey, Buffer.from(hex, 'hex'));
    } catch (err) {
      if (err instanceof RotationError) throw new CliError(err.message);
      throw err;
    }
  });
  if (devKeyFile) {
    writeFileSync(`${devKeyFile}.new`, hex + '\n', { mode: 0o600 });
    renameSync(`${devKeyFile}.new`, devKeyFile);
  }
  const out = { rotated: result.columns, new_key_file: path, ...(created ? { new_key_created: true } : {}), ...(devKeyFile ? { dev_key_file_updated: devKeyFile } : {}) };
  print(out, json);
  if (!json) {
    console.log(devKeyFile ? "\nThe dev profile's key file now holds the new key." : `\nEvery secret is now under the key in ${path}. Set MASTER_KEY to it for every api and worker process, then start them; the old key opens nothing any more.`);
  }
}
