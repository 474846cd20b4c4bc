import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import type { Database } from '../../src/db/database.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { env as testEnv } from '../helpers/env.ts';
import { pgClusterAvailable, startPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { checkInvariants, drainWebhooks, LONG, Payments, runSeed, seeded, setupGatewayMerchant, signedCall, startMiner, waitUntil, writeGatewayConfig } from '../helpers/reliability.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { sleep } from '../helpers/wait.ts';
import { Receiver } from './webhook-fixtures.ts';
import { payerAddress, startTestChain } from './watcher-fixtures.ts';

/**
 * Several processes on one Postgres (reliability suite, RELIABILITY.md "Multi-process"): three
 * `serve --role api` and two `serve --role worker` processes under a load of orders spread across
 * the three APIs and payments on anvil. The receiver fails the first attempt of about a quarter of
 * the events, so both dispatchers also race on retries. Checked: one INVOICED transition per order,
 * no (delivery, attempt) sent twice, one watcher leader per chain — always a worker — taken over
 * within seconds when the leader is killed with SIGKILL, and payments made after the kill confirm.
 * The private cluster of helpers/pg-cluster.ts when PostgreSQL is installed, else a scratch
 * database on TEST_DATABASE_URL.
 */
const ROUNDS = LONG ? 5 : 1; // leader kills
const ORDERS_PER_PHASE = LONG ? 80 : 24;
const FEE_MICROS = 10_000n;
/** The watcher lease is max(5 s, 3 × poll); a follower ticks every poll: takeover ≤ ~5.1 s, plus slack for a loaded machine. */
const TAKEOVER_LIMIT_MS = 12_000;

const usePrivate = pgClusterAvailable();
if (!usePrivate && !testEnv.TEST_DATABASE_URL && testEnv.TOLLGATE_TEST_STRICT === '1') {
  throw new Error('TOLLGATE_TEST_STRICT=1 but neither initdb/pg_ctl nor TEST_DATABASE_URL is available: multi-process tests cannot run');
}

/** `w-<host>:<pid>:<random>` (chain/evm/watcher.ts): the pid of the process that holds a lease. */
const holderPid = (holder: string): number => Number(holder.split(':').at(-2));

describe('multi-process: 3 api + 2 worker processes on one Postgres', { skip: !usePrivate && !testEnv.TEST_DATABASE_URL && 'no PostgreSQL' }, () => {
  const seed = runSeed();
  const rng = seeded(seed);
  const dir = mkdtempSync(join(tmpdir(), 'tg-multi-'));
  let pg: PgCluster | undefined;
  let scratch: { url: string; name: string } | undefined;
  let dev: DevChain;
  let db: Database;
  let rx: Receiver;
  let env: Record<string, string>;
  const all: TollgateProcess[] = [];

  async function spawn(role: 'api' | 'worker'): Promise<{ proc: TollgateProcess; url: string }> {
    const proc = spawnTollgate(['serve', '--role', role], env);
    all.push(proc);
    const url = (await proc.waitFor(/listening on (\S+)/, 90_000))[1]!;
    return { proc, url };
  }

  before(async () => {
    console.log(`multi-process test seed ${seed} (replay: TOLLGATE_SEED=${seed}); ${usePrivate ? 'private cluster' : 'scratch database'}, leader kills ${ROUNDS}`);
    const dbUrl = usePrivate ? (pg = await startPgCluster()).url : (scratch = await createScratchDatabase()).url;
    [dev, rx] = await Promise.all([startTestChain(), Receiver.start()]);
    db = await openPostgres(dbUrl, { max: 3 });
    const configPath = writeGatewayConfig(dir, dev, { confirmations: 2, finality: 4, pollMs: 100 });
    env = { DATABASE_URL: dbUrl, TOLLGATE_CONFIG: configPath, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
  });
  after(async () => {
    await Promise.all(all.map((p) => p.stop('SIGKILL')));
    await rx?.close();
    await db?.close().catch(() => {});
    await dev?.stop();
    await pg?.destroy();
    if (scratch) await dropScratchDatabase(scratch.name);
    rmSync(dir, { recursive: true, force: true });
  });

  it('no double confirmation or delivery; one leader per chain, taken over after kill -9', { timeout: LONG ? 30 * 60_000 : 115_000 }, async () => {
    const t0 = Date.now();
    // All five at once: they also race on the start-up migrations.
    const started = await Promise.all([spawn('api'), spawn('api'), spawn('api'), spawn('worker'), spawn('worker')]);
    const apis = started.slice(0, 3);
    const workers = started.slice(3).map((s) => s.proc);
    const startupMs = Date.now() - t0;
    const apiPids = new Set(apis.map((a) => a.proc.child.pid!));

    // The receiver fails the first attempt of ~25 % of events (503): their retries are claimed by
    // whichever dispatcher is first.
    const failFirst = new Set<string>();
    rx.reply = (r) => {
      const id = r.headers['webhook-id'] as string;
      if (r.headers['x-webhook-attempt'] === '1' && !failFirst.has(id) && rng.chance(0.25)) {
        failFirst.add(id);
        return { status: 503, body: 'try later' };
      }
      return { status: 200, body: 'ok' };
    };
    const wallet = `0x${randomBytes(20).toString('hex')}` as Hex;
    const { creds } = await setupGatewayMerchant(apis[0]!.url, dev, { wallet, topUp: '100.00', webhookUrl: rx.url, events: ['order.payment_confirmed', 'order.invoiced'] });
    const payments = new Payments(dev);
    const miner = startMiner(dev.rpcUrl, 250);

    // Lease sampler: who leads, every 100 ms.
    const samples: { at: number; holder: string | undefined }[] = [];
    const dispatchers = new Set<string>(); // webhook claims seen (locked_by = host:pid:random)
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await db.query<{ holder: string }>('SELECT holder FROM chain_leases WHERE chain_id = $1 AND expires_at >= now()', [dev.chainId]);
        samples.push({ at: Date.now(), holder: rows[0]?.holder });
        const claims = await db.query<{ locked_by: string }>('SELECT DISTINCT locked_by FROM webhook_deliveries WHERE locked_by IS NOT NULL');
        for (const c of claims.rows) dispatchers.add(c.locked_by);
        await sleep(100);
      }
    })();

    const created: string[] = [];
    const paid: string[] = [];
    const perApi = [0, 0, 0];
    const problems: string[] = [];
    let next = 0;
    async function orderAndPay(): Promise<void> {
      const i = next++;
      const a = i % apis.length;
      const payer = i % dev.payers.length;
      const body = { dapp_order_id: `multi-${seed}-${i}`, chain_id: dev.chainId, token_symbol: 'USDC', from_address: payerAddress(dev, payer), amount_wei: String(2_000_000 + i) };
      const r = await signedCall(apis[a]!.url, creds, 'POST', '/api/v1/orders', body);
      if (r.status !== 402) return void problems.push(`create on api ${a}: ${r.status} ${r.text.slice(0, 300)}`);
      perApi[a]!++;
      created.push(r.body.order_id);
      const hash = await payments.pay(payer, wallet, BigInt(body.amount_wei));
      if (hash) paid.push(r.body.order_id);
      // A status poll on another API: every process sees the same state.
      const poll = await signedCall(apis[(a + 1) % apis.length]!.url, creds, 'GET', `/api/v1/orders/${r.body.order_id}`);
      if (poll.status !== 200) problems.push(`poll ${r.body.order_id}: ${poll.status}`);
    }
    async function phase(n: number): Promise<void> {
      const jobs: Promise<void>[] = [];
      for (let k = 0; k < n; k++) {
        jobs.push(orderAndPay());
        await sleep(rng.int(10, 80));
      }
      await Promise.all(jobs);
    }

    const deadPids = new Set<number>();
    const takeovers: { killedPid: number; newHolder: string; ms: number }[] = [];
    await phase(ORDERS_PER_PHASE);
    for (let round = 0; round < ROUNDS; round++) {
      // Some orders of the last phase are still confirming when their watcher dies.
      const holder = await waitUntil(
        async () => samples.at(-1)?.holder,
        20_000,
        () => 'no watcher ever took the lease',
      );
      const pid = holderPid(holder);
      const victim = workers.find((w) => w.child.pid === pid);
      assert.ok(victim, `lease holder ${holder} is one of the worker processes (${workers.map((w) => w.child.pid).join(', ')})`);
      const killedAt = Date.now();
      deadPids.add(pid);
      await victim.stop('SIGKILL');
      // Payments right after the kill, before any takeover: they must still confirm.
      const afterKill = phase(ORDERS_PER_PHASE);
      const newHolder = await waitUntil(
        async () => {
          const h = samples.at(-1)?.holder;
          return h && h !== holder && samples.at(-1)!.at > killedAt ? h : undefined;
        },
        TAKEOVER_LIMIT_MS,
        () => `no takeover of ${holder} within ${TAKEOVER_LIMIT_MS} ms`,
        20,
      );
      takeovers.push({ killedPid: pid, newHolder, ms: Date.now() - killedAt });
      assert.ok(
        workers.some((w) => w !== victim && w.child.pid === holderPid(newHolder)),
        `the new leader ${newHolder} is the surviving worker`,
      );
      await afterKill;
      // Back to two workers (a fresh process) for the next round and the drain.
      workers.splice(workers.indexOf(victim), 1, (await spawn('worker')).proc);
    }

    await payments.settled();
    assert.deepEqual(payments.failed, [], 'every payment was mined');
    await waitUntil(
      async () => {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND status = 'INVOICED'`, [paid]);
        return rows[0]!.n === paid.length ? true : undefined;
      },
      45_000,
      async () => {
        const { rows } = await db.query<{ id: string; status: string }>(`SELECT id, status FROM orders WHERE id = ANY($1) AND status <> 'INVOICED'`, [paid]);
        return `paid orders not INVOICED: ${JSON.stringify(rows.slice(0, 10))} (${rows.length})`;
      },
    );
    const received = () => new Set(rx.received.map((x) => x.headers['webhook-id'] as string));
    const { drainMs, deadClaims, deadClaimWaitMs } = await drainWebhooks(db, creds.merchantId, received, { deadPids });
    sampling = false;
    await sampler;
    await miner.stop();

    // No (delivery, attempt) sent twice; no (event, attempt) either (one endpoint, no redeliveries).
    const byDelivery = new Map<string, number>();
    const byEvent = new Map<string, number>();
    for (const x of rx.received) {
      const att = x.headers['x-webhook-attempt'] as string;
      const k1 = `${x.headers['x-webhook-delivery']}#${att}`;
      const k2 = `${x.headers['webhook-id']}#${att}`;
      byDelivery.set(k1, (byDelivery.get(k1) ?? 0) + 1);
      byEvent.set(k2, (byEvent.get(k2) ?? 0) + 1);
    }
    for (const [k, n] of [...byDelivery, ...byEvent]) if (n > 1) problems.push(`${k} was sent ${n} times`);
    for (const id of failFirst) if (!rx.received.some((x) => x.headers['webhook-id'] === id && x.headers['x-webhook-attempt'] === '2')) problems.push(`event ${id} failed once and was never retried`);
    const holders = new Set(samples.map((s) => s.holder).filter((h): h is string => h !== undefined));
    for (const h of holders) if (apiPids.has(holderPid(h))) problems.push(`api process ${h} held the watcher lease`);

    const violations = await checkInvariants(db, { merchantId: creds.merchantId, feeMicros: FEE_MICROS, ordersCreated: created, ordersPaid: paid, eventsReceived: received() });
    const { rows: att } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_attempts`);
    const summary = {
      seed,
      startupMs,
      orders: created.length,
      perApi,
      paid: paid.length,
      webhooksReceived: rx.received.length,
      failedFirstAttempts: failFirst.size,
      deliveryAttempts: att[0]!.n,
      dispatchersSeen: [...dispatchers],
      leaseHolders: [...holders],
      takeovers,
      drainMs,
      deadClaims,
      deadClaimWaitMs,
      totalMs: Date.now() - t0,
    };
    console.log(`multi-process summary ${JSON.stringify(summary)}`);
    assert.deepEqual([...problems, ...violations], [], `seed ${seed}`);
    assert.equal(takeovers.length, ROUNDS);
    assert.ok(
      perApi.every((n) => n > 0),
      'orders went through every API process',
    );
  });
});
