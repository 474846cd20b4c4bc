import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { signRequest } from '@tollgate/protocol';
import { startTollgate } from '../../src/main.ts';
import { openDatabase } from '../../src/db/open.ts';
import { backends, createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN, buildConfig } from '../helpers/server.ts';

/** Signs one fixed request so the very same headers can be sent again later. */
function fixedHeaders(creds: { apiKey: string; apiSecret: string }) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = `replay-${randomBytes(8).toString('hex')}`;
  return {
    'x-api-key': creds.apiKey,
    'x-timestamp': timestamp,
    'x-nonce': nonce,
    'x-sign': signRequest(creds.apiSecret, { apiKey: creds.apiKey, timestamp, nonce }),
  };
}

async function createMerchant(url: string) {
  const r = await fetch(`${url}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Replay Test' }),
  });
  assert.equal(r.status, 201);
  const b = (await r.json()) as { api_key: string; api_secret: string };
  return { apiKey: b.api_key, apiSecret: b.api_secret };
}

describe('nonce replay survives a restart (PGlite on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-replay-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses the same headers after the process restarted', async () => {
    const config = buildConfig({ dataDir: dir });
    let db = await openDatabase({ dataDir: dir });
    let tg = await startTollgate(config, { db, http: { logger: false } });
    const creds = await createMerchant(tg.url!);
    const headers = fixedHeaders(creds);
    const first = await fetch(`${tg.url}/api/v1/merchant`, { headers });
    assert.equal(first.status, 200);
    await tg.close();
    await db.close();

    db = await openDatabase({ dataDir: dir });
    tg = await startTollgate(config, { db, http: { logger: false } });
    try {
      const again = await fetch(`${tg.url}/api/v1/merchant`, { headers });
      assert.equal(again.status, 401);
      const body = (await again.json()) as { error: string; code: string };
      assert.equal(body.code, 'replay_detected');
      assert.equal(body.error, 'Replay request detected');
    } finally {
      await tg.close();
      await db.close();
    }
  });
});

if (backends().includes('postgres')) {
  describe('nonce replay across two processes on one Postgres', () => {
    it('a nonce used on process A is refused by process B', async () => {
      const { url, name } = await createScratchDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'tg-2proc-'));
      const configPath = join(dir, 'tollgate.json');
      writeFileSync(configPath, JSON.stringify({ environment: 'test', chains: [] }));
      const env = { DATABASE_URL: url, TOLLGATE_CONFIG: configPath, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
      const a = spawnTollgate(['serve', '--role', 'api'], env);
      const b = spawnTollgate(['serve', '--role', 'api'], env);
      try {
        const urlA = (await a.waitFor(/listening on (http:\/\/\S+)/))[1]!;
        const urlB = (await b.waitFor(/listening on (http:\/\/\S+)/))[1]!;
        assert.notEqual(urlA, urlB);
        const creds = await createMerchant(urlA);
        const headers = fixedHeaders(creds);
        assert.equal((await fetch(`${urlA}/api/v1/merchant`, { headers })).status, 200);
        const onB = await fetch(`${urlB}/api/v1/merchant`, { headers });
        assert.equal(onB.status, 401);
        assert.equal(((await onB.json()) as { error: string }).error, 'Replay request detected');
        // and fresh headers work on B: the refusal was the replay, not B's state
        assert.equal((await fetch(`${urlB}/api/v1/merchant`, { headers: fixedHeaders(creds) })).status, 200);
        // getOrderStatus records its nonce in the statement that reads the order (orders/status-batch.ts):
        // a read answered on A (here 404: its nonce is used all the same) is a replay on B.
        const read = fixedHeaders(creds);
        assert.equal((await fetch(`${urlA}/api/v1/orders/ord_missing`, { headers: read })).status, 404);
        const readOnB = await fetch(`${urlB}/api/v1/orders/ord_missing`, { headers: read });
        assert.equal(readOnB.status, 401);
        assert.equal(((await readOnB.json()) as { code: string }).code, 'replay_detected');
      } finally {
        await Promise.all([a.stop(), b.stop()]);
        rmSync(dir, { recursive: true, force: true });
        await dropScratchDatabase(name);
      }
    });
  });
}
