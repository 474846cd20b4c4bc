import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signedHeaders, verifyWebhookSignature } from '@tollgate/protocol';
import { backends, createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET } from '../helpers/orders.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { fakeChain, TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { Receiver } from './webhook-fixtures.ts';

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/**
 * The outbox survives kill -9: the order is cancelled (event committed with the state change) by a
 * process that runs no dispatcher and is then SIGKILLed; a new process delivers the event.
 */
for (const backend of backends()) {
  describe(`webhook delivery survives kill -9 (${backend})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-webhook-crash-'));
    let env: Record<string, string>;
    let scratch: { url: string; name: string } | undefined;
    let rx: Receiver;
    const procs: TollgateProcess[] = [];

    before(async () => {
      rx = await Receiver.start();
      const chain = fakeChain();
      const configPath = join(dir, 'tollgate.json');
      // One chain so an order can be created; its RPC is never needed (the order is cancelled).
      writeFileSync(
        configPath,
        JSON.stringify({
          environment: 'test',
          chains: [{ chain_id: chain.chainId, rpc_url: chain.rpcUrl, confirmations: 1, finality_confirmations: 2, tokens: chain.tokens }],
        }),
      );
      env = { TOLLGATE_CONFIG: configPath, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
      if (backend === 'postgres') {
        scratch = await createScratchDatabase();
        env.DATABASE_URL = scratch.url;
      } else {
        env.DATA_DIR = join(dir, 'data');
      }
    });
    after(async () => {
      await Promise.all(procs.map((p) => p.stop('SIGKILL')));
      await rx.close();
      if (scratch) await dropScratchDatabase(scratch.name);
      rmSync(dir, { recursive: true, force: true });
    });

    async function start(role: 'api' | 'all'): Promise<string> {
      const p = spawnTollgate(['serve', '--role', role], env);
      procs.push(p);
      return (await p.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1]!;
    }

    it('an event committed before the crash is delivered after the restart', async () => {
      const a = await start('api');
      const m = await call(a, 'POST', '/admin/v1/merchants', { name: 'Crash Test' });
      assert.equal(m.status, 201);
      const id = m.body.merchant_id as string;
      assert.equal((await call(a, 'POST', `/admin/v1/merchants/${id}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: MERCHANT_WALLET })).status, 201);
      assert.equal((await call(a, 'POST', `/admin/v1/merchants/${id}/fee-balance/top-ups`, { amount: '1.00' })).status, 200);
      const ep = await call(a, 'POST', `/admin/v1/merchants/${id}/webhooks`, { url: rx.url, events: ['order.cancelled'] });
      assert.equal(ep.status, 201);

      const creds = { apiKey: m.body.api_key as string, apiSecret: m.body.api_secret as string };
      const body = buildOrderBody();
      const order = await call(a, 'POST', '/api/v1/orders', body, signedHeaders({ ...creds, body }));
      assert.equal(order.status, 402, JSON.stringify(order.body));
      const cancelled = await call(a, 'POST', `/api/v1/orders/${order.body.order_id}/cancel`, {}, signedHeaders({ ...creds, body: {} }));
      assert.equal(cancelled.status, 200);

      await procs[0]!.stop('SIGKILL');
      assert.equal(rx.received.length, 0, 'the api-only process never sent it');

      await start('all');
      const deadline = Date.now() + 20_000;
      while (rx.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(rx.received.length, 1, 'delivered after the restart');
      const got = rx.received[0]!;
      assert.ok(verifyWebhookSignature({ secret: ep.body.secret, rawBody: got.body, header: got.headers['x-webhook-signature'] as string }));
      const envelope = JSON.parse(got.body);
      assert.equal(envelope.event, 'order.cancelled');
      assert.equal(envelope.payload.order_id, order.body.order_id);
      assert.equal(envelope.payload.status, 'CANCELLED');
    });
  });
}
