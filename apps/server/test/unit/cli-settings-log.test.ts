// Where `npm start` keeps its data and how the CLI finds it, and the one log line format.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { findDevTokenFile, loadCliSettings } from '../../src/config/cli.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createChainLogger } from '../../src/chain/evm/context.ts';
import { createLogger } from '../../src/log.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

describe('dev data directory and CLI token lookup', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tg-cli-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('the root `npm start` runs the gateway from the repository root, so ./.tollgate is <repo>/.tollgate', () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    // npm runs a package's scripts in that package's folder: no `-w` / `cd` hop into apps/server.
    assert.equal(scripts.start, 'node apps/server/bin/tollgate.js serve');
    const repo = join(tmp, 'repo');
    assert.equal(loadConfig({ MASTER_KEY: 'a'.repeat(64), ADMIN_TOKEN: 'tgadm_0123456789abcdef' }, repo).dataDir, join(repo, '.tollgate'));
  });

  it('the CLI finds .tollgate/admin.token in the current folder or a parent; DATA_DIR and ADMIN_TOKEN win', () => {
    const repo = join(tmp, 'repo');
    mkdirSync(join(repo, '.tollgate'), { recursive: true });
    mkdirSync(join(repo, 'apps/server/src'), { recursive: true });
    writeFileSync(join(repo, '.tollgate/admin.token'), 'tgadm_root\n');
    assert.equal(loadCliSettings({}, repo).adminToken, 'tgadm_root');
    assert.equal(loadCliSettings({}, join(repo, 'apps/server/src')).adminToken, 'tgadm_root');
    assert.equal(findDevTokenFile({}, join(repo, 'apps/server')), join(repo, '.tollgate/admin.token'));
    // The nearest one wins (a second dev instance started inside a sub-folder).
    mkdirSync(join(repo, 'apps/server/.tollgate'), { recursive: true });
    writeFileSync(join(repo, 'apps/server/.tollgate/admin.token'), 'tgadm_inner\n');
    assert.equal(loadCliSettings({}, join(repo, 'apps/server/src')).adminToken, 'tgadm_inner');
    // An explicit DATA_DIR is not searched upward: a wrong one finds nothing rather than another instance.
    assert.equal(loadCliSettings({ DATA_DIR: 'elsewhere' }, join(repo, 'apps/server')).adminToken, undefined);
    assert.equal(loadCliSettings({ DATA_DIR: '../../.tollgate' }, join(repo, 'apps/server')).adminToken, 'tgadm_root');
    assert.equal(loadCliSettings({ ADMIN_TOKEN: 'tgadm_env' }, repo).adminToken, 'tgadm_env');
    assert.equal(loadCliSettings({}, tmp).adminToken, undefined);
    assert.equal(loadCliSettings({ PORT: '9000' }, tmp).url, 'http://127.0.0.1:9000');
  });
});

describe('one log format (pino: numeric level, epoch-ms time)', () => {
  it('the chain watcher logger and the background loggers write pino lines', () => {
    const lines: string[] = [];
    const log = createChainLogger('info', { chain_id: 31337 }, (l) => lines.push(l));
    log.debug('hidden');
    log.info('tick', { head: 5n });
    log.warn('w');
    log.error('e');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      parsed.map((p) => p.level),
      [30, 40, 50],
    );
    for (const p of parsed) {
      assert.equal(typeof p.time, 'number');
      assert.equal(p.pid, process.pid);
      assert.equal(typeof p.hostname, 'string');
    }
    assert.equal(parsed[0]!.head, '5');
    assert.equal(parsed[0]!.chain_id, 31337);
    const out: string[] = [];
    createLogger('info', {}, { write: (l) => void out.push(l) }).error({ err: 'x', amount: 10n ** 30n }, 'loop failed');
    const line = JSON.parse(out[0]!);
    assert.deepEqual(Object.keys(line), ['level', 'time', 'pid', 'hostname', 'err', 'amount', 'msg']);
    assert.equal(line.level, 50);
    assert.equal(line.amount, '1000000000000000000000000000000', 'a bigint is logged whole, as a string');
    assert.ok(Math.abs(line.time - Date.now()) < 60_000, 'epoch milliseconds');
    assert.deepEqual(createChainLogger('silent', {}, (l) => lines.push(l)).error('x'), undefined);
    assert.deepEqual(createChainLogger('no-such-level', {}, (l) => lines.push(l)).error('x'), undefined);
    assert.equal(lines.length, 3);
  });
});
