import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import { DataDirLockedError } from '../../db/lockfile.ts';
import { migrationStatus } from '../../db/migrate.ts';
import { NoDatabaseError, openForMaintenance } from '../../db/open.ts';
import { decryptSecret } from '../../merchants/secrets.ts';
import { checkEndpointUrl } from '../../webhooks/url-policy.ts';
import { ENCRYPTED_COLUMNS } from '../rotate-master-key.ts';
import { redactUrl, within, type CheckResult, type DoctorOptions } from './types.ts';

/**
 * The database checks: reachable, migrations current, MASTER_KEY opens the secrets at rest, every
 * enabled webhook endpoint passes the egress policy. The embedded database of a running gateway
 * cannot be opened by a second process (PGlite is one process per directory): then its `/readyz`
 * answers for it, and the checks that need the data are skipped with that reason.
 */
export async function checkDatabase(config: Config, opts: DoctorOptions): Promise<CheckResult[]> {
  const kind = config.databaseUrl ? 'PostgreSQL' : 'embedded';
  let db: Database;
  const t0 = Date.now();
  try {
    db = await within(openForMaintenance({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }), Math.max(opts.callTimeoutMs, 30_000));
  } catch (err) {
    if (err instanceof DataDirLockedError) return heldByGateway(config, err, opts);
    const why = err instanceof NoDatabaseError ? err.message : `cannot connect: ${dbMessage(err, config.databaseUrl)}`;
    return [{ name: 'database', status: 'fail', detail: why }, ...skipped('the database could not be opened')];
  }
  try {
    const out: CheckResult[] = [{ name: 'database', status: 'ok', detail: `${kind}, reachable (opened in ${Date.now() - t0} ms)` }];
    out.push(await migrations(db));
    out.push(await masterKey(db, config.masterKey));
    out.push(await webhookEgress(db, config));
    return out;
  } finally {
    await db.close().catch(() => {});
  }
}

const DATA_CHECKS = ['migrations', 'master key', 'webhook egress'];

function skipped(why: string): CheckResult[] {
  return DATA_CHECKS.map((name) => ({ name, status: 'skip' as const, detail: why }));
}

/** pg's messages can quote the URL (user, host); the password never reaches them, the URL is not printed. */
function dbMessage(err: unknown, url: string | undefined): string {
  const m = (err as Error).message ?? String(err);
  return (url ? m.split(url).join(redactUrl(url)) : m).slice(0, 300);
}

async function heldByGateway(config: Config, err: DataDirLockedError, opts: DoctorOptions): Promise<CheckResult[]> {
  const pid = /process (\d+)/.exec(err.message)?.[1];
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}/readyz`;
  let status: number | string;
  try {
    status = (await within(fetch(url), opts.callTimeoutMs)).status;
  } catch (e) {
    status = (e as Error).message;
  }
  const why = `held by the running gateway (pid ${pid}): PGlite allows one process, so doctor cannot open it`;
  return [
    status === 200 ? { name: 'database', status: 'ok', detail: `embedded, ${why}; its ${url} answers 200` } : { name: 'database', status: 'fail', detail: `embedded, ${why}, and its ${url} answers ${status}` },
    ...skipped(`embedded database held by the running gateway (stop it, or use PostgreSQL, to check this)`),
  ];
}

async function migrations(db: Database): Promise<CheckResult> {
  const s = await migrationStatus(db);
  const latest = s.applied.at(-1);
  const data = { applied: s.applied.length, pending: s.pending.map((m) => m.version), unknown: s.unknown };
  if (s.unknown.length > 0) return { name: 'migrations', status: 'fail', detail: `the database has migration(s) ${s.unknown.join(', ')} this build does not know: a newer Tollgate migrated it`, data };
  if (s.pending.length > 0) return { name: 'migrations', status: 'fail', detail: `${s.pending.length} pending (first ${String(s.pending[0]!.version).padStart(4, '0')}_${s.pending[0]!.name}): run tollgate migrate`, data };
  return { name: 'migrations', status: 'ok', detail: `current (${s.applied.length} applied, latest ${latest ? `${String(latest.version).padStart(4, '0')}_${latest.name}` : 'none'})`, data };
}

/**
 * Does MASTER_KEY open the secrets at rest? One value per encrypted column is enough: a wrong key
 * (a typo, a backup restored under another key, a half-finished rotation) opens none of them.
 */
async function masterKey(db: Database, key: Buffer): Promise<CheckResult> {
  let tried = 0;
  for (const t of ENCRYPTED_COLUMNS) {
    for (const c of t.columns) {
      const { rows } = await db.query<{ k: string; v: string }>(`SELECT ${t.key} AS k, ${c} AS v FROM ${t.table} WHERE ${c} IS NOT NULL LIMIT 1`);
      const row = rows[0];
      if (!row) continue;
      tried++;
      try {
        decryptSecret(key, row.v, t.aad(row.k));
      } catch {
        return { name: 'master key', status: 'fail', detail: `MASTER_KEY does not open ${t.table}.${c}: it is not the key these secrets were written with` };
      }
    }
  }
  return { name: 'master key', status: 'ok', detail: tried === 0 ? 'no secret stored yet' : `opens the secrets at rest (${tried} column(s) sampled)` };
}

/** The egress policy of the environment, and every enabled endpoint checked against it now (DNS may have changed since creation). */
async function webhookEgress(db: Database, config: Config): Promise<CheckResult> {
  const policy = config.environment === 'production' ? 'production: https to public addresses only, re-checked at every connect' : 'test environment: http and private addresses allowed';
  const { rows } = await db.query<{ id: string; url: string }>('SELECT id, url FROM webhook_endpoints WHERE enabled ORDER BY id');
  const refused: string[] = [];
  for (const r of rows) {
    const check = await checkEndpointUrl(r.url, config.environment);
    if (!check.ok) refused.push(`${r.id} (${check.reason})`);
  }
  const data = { environment: config.environment, enabled_endpoints: rows.length, refused: refused.length };
  if (refused.length > 0) {
    return { name: 'webhook egress', status: 'fail', detail: `${policy}; ${refused.length} of ${rows.length} enabled endpoint(s) refused by it, their deliveries fail: ${refused.slice(0, 5).join('; ')}`, data };
  }
  return { name: 'webhook egress', status: config.environment === 'production' ? 'ok' : 'warn', detail: `${policy}; ${rows.length} enabled endpoint(s) pass`, data };
}
