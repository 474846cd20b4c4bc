import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openPglite } from '../../src/db/pglite.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { freePort } from '../helpers/net.ts';

// The target for `npm start` right after start (it idled at ~0.9 GB): idle RSS of the
// gateway process under 400 MB. The peak bound catches initdb's memory coming back into the
// gateway (it peaked at ~950 MB there; in a child process the gateway's own peak is ~320 MB).
const IDLE_RSS_MB = 400;
const PEAK_RSS_MB = 600;

/** VmRSS and VmHWM (peak) of a process, in MB, from /proc (Linux, like every machine this runs on). */
function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** `tollgate serve` as `npm start` runs it, until the dev profile has printed its banner. */
async function startDevProfile(dir: string, port: number): Promise<TollgateProcess> {
  const p = spawnTollgate(['serve'], { DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn' });
  // A first start creates the database; on the shared two-core CI machine that took up to 30 s.
  await p.waitFor(/payer private key/, 90_000);
  // Idle: what the operator sees a moment after start (workers polling, no request).
  await new Promise((r) => setTimeout(r, 3000));
  return p;
}

describe('embedded default footprint (`npm start`: PGlite in a data directory + local anvil)', () => {
  it(`idles under ${IDLE_RSS_MB} MB RSS on a new data directory and again on the existing one`, { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-rss-'));
    const port = await freePort();
    let p: TollgateProcess | undefined;
    try {
      p = await startDevProfile(dir, port);
      const first = memoryMb(p.child.pid!);
      assert.ok(first.rss < IDLE_RSS_MB, `idle RSS on a new data directory: ${first.rss.toFixed(0)} MB (limit ${IDLE_RSS_MB})`);
      assert.ok(first.peak < PEAK_RSS_MB, `peak RSS on a new data directory: ${first.peak.toFixed(0)} MB (limit ${PEAK_RSS_MB})`);
      // The hosted page's bundle is built on first use, not at start: it still serves.
      const js = await fetch(`http://127.0.0.1:${port}/checkout/assets/app.js`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
      assert.equal(await p.stop('SIGINT'), 0, p.output());

      p = await startDevProfile(dir, port);
      const again = memoryMb(p.child.pid!);
      assert.ok(again.rss < IDLE_RSS_MB, `idle RSS on the existing data directory: ${again.rss.toFixed(0)} MB (limit ${IDLE_RSS_MB})`);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(await p.stop('SIGINT'), 0, p.output());
    } finally {
      await p?.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('embedded database settings', () => {
  const show = async (db: Awaited<ReturnType<typeof openPglite>>) => {
    const { rows } = await db.query<{ shared_buffers: string; maintenance_work_mem: string }>("SELECT current_setting('shared_buffers') AS shared_buffers, current_setting('maintenance_work_mem') AS maintenance_work_mem");
    return rows[0];
  };

  it('applies the small buffer settings in memory and in a data directory created in a child process', { timeout: 120_000 }, async () => {
    const mem = await openPglite(undefined);
    try {
      assert.deepEqual(await show(mem), { shared_buffers: '16MB', maintenance_work_mem: '8MB' });
    } finally {
      await mem.close();
    }
    const parent = mkdtempSync(join(tmpdir(), 'tg-pgdata-'));
    const dir = join(parent, 'pgdata');
    // What a first start killed during initdb leaves (its pid no longer exists): removed.
    mkdirSync(join(parent, '.pgdata.init-999999999', 'base'), { recursive: true });
    try {
      const db = await openPglite(dir);
      try {
        assert.deepEqual(await show(db), { shared_buffers: '16MB', maintenance_work_mem: '8MB' });
        await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
      } finally {
        await db.close();
      }
      assert.ok(existsSync(join(dir, 'PG_VERSION')));
      // The child wrote a sibling directory and it was renamed into place: nothing left beside it,
      // and the dead start's leftover is gone.
      assert.deepEqual(readdirSync(parent), ['pgdata']);
      const reopened = await openPglite(dir);
      try {
        assert.deepEqual((await reopened.query<{ n: number }>('SELECT n FROM kept')).rows, [{ n: 7 }]);
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
