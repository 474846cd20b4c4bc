import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import { spawnTollgate } from '../helpers/process.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('dev profile (`npm start` without TOLLGATE_CONFIG)', () => {
  it('starts anvil + tokens + demo merchant, answers /healthz within 15 s, prints working credentials, stops on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-dev-'));
    const port = await freePort();
    const started = Date.now();
    const p = spawnTollgate(['serve'], { DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn' });
    try {
      const out = await p.waitFor(/payer private key (0x[0-9a-f]{64})/, 15_000);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
      assert.ok(Date.now() - started < 15_000, 'healthz within 15 s');
      assert.ok(out[1]);
      const text = p.output();
      const apiKey = /demo API key\s+(\S+)/.exec(text)?.[1];
      const apiSecret = /demo API secret\s+(\S+)/.exec(text)?.[1];
      const admin = /admin token\s+(\S+)/.exec(text)?.[1];
      assert.ok(apiKey && apiSecret && admin, text);
      assert.match(text, /token USDC\s+0x[0-9a-fA-F]{40} \(6 decimals\)/);
      assert.match(text, /token USDT\s+0x[0-9a-fA-F]{40} \(6 decimals\)/);
      // The printed credentials really work.
      const me = await fetch(`http://127.0.0.1:${port}/api/v1/merchant`, { headers: signedHeaders({ apiKey, apiSecret }) });
      assert.equal(me.status, 200);
      const body = (await me.json()) as { merchant_id: string; wallets: unknown[]; fee_balance: { available: string } };
      assert.equal(body.merchant_id, 'demo');
      assert.equal(body.wallets.length, 2);
      assert.equal(body.fee_balance.available, '100.00');
      const show = await fetch(`http://127.0.0.1:${port}/admin/v1/merchants/demo`, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(show.status, 200);
      // Secrets generated for the dev profile are private to the user.
      assert.equal(statSync(join(dir, 'master.key')).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir, 'admin.token')).mode & 0o777, 0o600);
      const rpc = /chain\s+31337 at (http:\/\/\S+)/.exec(text)?.[1];
      assert.ok(rpc, text);

      const code = await p.stop('SIGINT');
      assert.equal(code, 0, p.output());
      // anvil stopped with it
      await assert.rejects(fetch(rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' }));
    } finally {
      await p.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
