import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { env as testEnv } from '../helpers/env.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { adminCall, writeGatewayConfig } from '../helpers/reliability.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { startTestChain } from './watcher-fixtures.ts';

/**
 * Exactly-once claims across processes: two `serve --role api` processes on one PostgreSQL share
 * MASTER_KEY (so each checks the other's challenge ids and MACs). One transaction is presented for
 * 30 challenges, the verifies spread over both processes at once: one receipt, 29 × 409, one claim
 * row; both processes created the first receipt key concurrently and one key exists.
 */
if (!testEnv.TEST_DATABASE_URL && testEnv.TOLLGATE_TEST_STRICT === '1') {
  throw new Error('TOLLGATE_TEST_STRICT=1 but TEST_DATABASE_URL is not set: the multi-process machine-payment test cannot run');
}

const N = 30;
const FINALITY = 2;

describe('mpp verify across two processes on one Postgres', { skip: !testEnv.TEST_DATABASE_URL && 'TEST_DATABASE_URL not set' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-mpp-multi-'));
  let scratch: { url: string; name: string };
  let dev: DevChain;
  const procs: TollgateProcess[] = [];
  const urls: string[] = [];

  before(async () => {
    scratch = await createScratchDatabase();
    dev = await startTestChain();
    const config = writeGatewayConfig(dir, dev, { confirmations: 1, finality: FINALITY, pollMs: 1000 });
    const env = { DATABASE_URL: scratch.url, TOLLGATE_CONFIG: config, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
    for (let i = 0; i < 2; i++) procs.push(spawnTollgate(['serve', '--role', 'api'], env));
    for (const p of procs) urls.push((await p.waitFor(/listening on (\S+)/, 90_000))[1]!);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await dev?.stop();
    if (scratch) await dropScratchDatabase(scratch.name);
    rmSync(dir, { recursive: true, force: true });
  });

  const post = async (base: string, path: string, body: unknown) => {
    const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as any };
  };

  it(`${N} concurrent verifies of one transaction over two processes: one receipt`, { timeout: 120_000 }, async () => {
    const [a, b] = urls as [string, string];
    const m = await adminCall(a, 'POST', '/admin/v1/merchants', { name: 'MPP multi' });
    assert.equal(m.status, 201, m.text);
    const merchantId = m.body.merchant_id as string;
    assert.equal((await adminCall(a, 'POST', `/admin/v1/merchants/${merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: 'USDC', address: MERCHANT_WALLET })).status, 201);
    assert.equal((await adminCall(b, 'PUT', `/admin/v1/merchants/${merchantId}/mpp/routes/GET:api:data`, { amount_wei: '5000', chain_id: dev.chainId, token_symbol: 'USDC' })).status, 200);
    const payer = dev.payers[0]!;
    const cs = [];
    for (let i = 0; i < N; i++) {
      const r = await post(urls[i % 2]!, '/mpp/v1/challenge', { merchant_id: merchantId, route_canonical: 'GET:api:data', request_canonical: `GET:api:data:${i}`, payer_addr: payer.address });
      assert.equal(r.status, 402, JSON.stringify(r.body));
      cs.push(r.body);
    }
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address;
    const tx = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc, to: MERCHANT_WALLET as Hex, amount: 5000n });
    await mine(dev.rpcUrl, FINALITY - 1);
    // Each challenge is verified by the process that did NOT issue it.
    const rs = await Promise.all(cs.map((c, i) => post(urls[(i + 1) % 2]!, '/mpp/v1/verify', { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer.address, mac: c.mac })));
    const by = (n: number) => rs.filter((r) => r.status === n).length;
    assert.deepEqual([by(200), by(409)], [1, N - 1], JSON.stringify(rs.filter((r) => r.status !== 409).map((r) => r.body)));
    const jwks = await (await fetch(`${a}/.well-known/jwks.json`)).json();
    assert.equal(jwks.keys.length, 1);
    const kid = JSON.parse(Buffer.from(rs.find((r) => r.status === 200)!.body.receipt.split('.')[0], 'base64url').toString()).kid;
    assert.equal(kid, jwks.keys[0].kid);
  });
});
