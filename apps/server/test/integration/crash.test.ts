import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DevChain } from '@tollgate/devchain';
import { verifyWebhookSignature } from '@tollgate/protocol';
import type { Hex } from 'viem';
import type { Database } from '../../src/db/database.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { requirePgCluster, startPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import { RestartingGateway } from '../helpers/process.ts';
import { call, checkInvariants, drainWebhooks, LONG, Payments, RETURN_URL, runSeed, seeded, setupGatewayMerchant, signedCall, startMiner, Unreachable, waitUntil, writeGatewayConfig, type Reply } from '../helpers/reliability.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { sleep } from '../helpers/wait.ts';
import { Receiver } from './webhook-fixtures.ts';
import { payerAddress, startTestChain } from './watcher-fixtures.ts';

/**
 * Crash safety (reliability suite, RELIABILITY.md "Crash"): one Tollgate (`serve`, role all) as a
 * child process on a private PostgreSQL cluster, under a load of signed order creations, on-chain
 * payments, checkout sessions + binds and status polls, is killed with SIGKILL at random moments
 * (3 times here, 20 with TOLLGATE_LONG=1) and restarted on the same database each time. When
 * every payment has reached finality and the webhook outbox has drained, nothing may be lost and
 * nothing counted twice (helpers/reliability.ts checkInvariants). Seeded: the seed is printed;
 * TOLLGATE_SEED=<seed> replays the same choices (the interleaving still varies).
 */
const KILLS = LONG ? 20 : 3;
// CI: short gaps keep the file under its budget; a delivery stranded by the last kill comes back
// only ~70 s later (the dispatcher's claim lease), and that wait dominates the file's runtime.
const GAP_MS: [number, number] = LONG ? [2_000, 9_000] : [1_500, 4_000];
const MAX_ORDERS = LONG ? 3_000 : 200;
const CLIENTS = 3;
const FEE_MICROS = 10_000n; // fees.per_order 0.01
/** Binds per minute we allow ourselves: the public limit is 20/min per IP per process. */
const BIND_SPACING_MS = 4_000;
const RANK: Record<string, number> = { CHECKOUT_VERIFIED: 0, PAYMENT_CONFIRMED: 1, INVOICED: 2, CANCELLED: 2, EXPIRED: 2 };

const available = requirePgCluster();

describe('crash: kill -9 under load, restart on the same database (private PostgreSQL)', { skip: !available && 'initdb/pg_ctl not installed' }, () => {
  const seed = runSeed();
  const rng = seeded(seed);
  const dir = mkdtempSync(join(tmpdir(), 'tg-crash-'));
  let pg: PgCluster;
  let dev: DevChain;
  let db: Database;
  let rx: Receiver;
  let gw: RestartingGateway | undefined;
  let miner: { stop(): Promise<void> } | undefined;

  before(async () => {
    console.log(`crash test seed ${seed} (replay: TOLLGATE_SEED=${seed}); kills ${KILLS}, max orders ${MAX_ORDERS}`);
    [pg, dev, rx] = await Promise.all([startPgCluster(), startTestChain(), Receiver.start()]);
    db = await openPostgres(pg.url, { max: 3 });
    const configPath = writeGatewayConfig(dir, dev, { confirmations: 2, finality: 4, pollMs: 100 });
    const env = { DATABASE_URL: pg.url, TOLLGATE_CONFIG: configPath, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn' };
    gw = new RestartingGateway(env);
  });
  after(async () => {
    if (gw) gw.halted = true;
    await miner?.stop();
    await gw?.proc?.stop('SIGKILL');
    await rx?.close();
    await db?.close().catch(() => {});
    await dev?.stop();
    await pg?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`loses nothing and counts nothing twice across ${KILLS} kill -9s`, { timeout: LONG ? 60 * 60_000 : 115_000 }, async () => {
    const t0 = Date.now();
    await gw!.start();
    const wallet = `0x${randomBytes(20).toString('hex')}` as Hex;
    const { creds, endpointSecret } = await setupGatewayMerchant(gw!.base!, dev, {
      wallet,
      topUp: '1000.00',
      webhookUrl: rx.url,
      events: ['order.invoiced', 'quickpay.checkout.completed'],
    });
    const payments = new Payments(dev);
    miner = startMiner(dev.rpcUrl, 250);

    const stats = {
      kills: 0,
      restartsMs: [] as number[],
      ordersAnswered402: 0,
      ordersCommittedResponseLost: 0,
      ordersRetried: 0,
      cancels: 0,
      sessions: 0,
      binds: 0,
      bindsRetried: 0,
      rateLimited: 0,
      polls: 0,
      pollsFailed: 0,
    };
    const created: string[] = []; // answered 402
    const allOrders: string[] = []; // 402 or found committed after a lost response
    const paid: string[] = [];
    const sessionsPaid: string[] = [];
    const sessions: string[] = [];
    const lastSeen = new Map<string, string>();
    const problems: string[] = [];
    let nextOrder = 0;
    let createsInFlight = 0;
    let lastMinedAt = 0;
    let nextSession = 0;
    let nextBindAt = 0;

    /** Sends `attempt` until the gateway answers (retrying across restarts); reports how many tries failed. */
    async function untilAnswered(attempt: (base: string) => Promise<Reply>): Promise<{ r: Reply; lost: number }> {
      let lost = 0;
      for (;;) {
        const b = await gw!.currentBase();
        try {
          const r = await attempt(b);
          if (r.status >= 500) problems.push(`HTTP ${r.status} from the gateway: ${r.text.slice(0, 300)}`);
          return { r, lost };
        } catch (err) {
          if (!(err instanceof Unreachable)) throw err;
          lost++;
          if (lost > 500) throw new Error(`gave up after 500 network failures: ${err.message}`);
          await sleep(50);
        }
      }
    }

    const payLater = (orderId: string, payer: number, to: Hex, amount: bigint, session?: string) => {
      void payments.pay(payer, to, amount).then((hash) => {
        if (!hash) return;
        lastMinedAt = Date.now();
        paid.push(orderId);
        if (session) sessionsPaid.push(session);
      });
    };

    async function createOrder(): Promise<void> {
      const i = nextOrder++;
      const payer = i % dev.payers.length;
      const body = { dapp_order_id: `crash-${seed}-${i}`, chain_id: dev.chainId, token_symbol: 'USDC', from_address: payerAddress(dev, payer), amount_wei: String(1_000_000 + i) };
      createsInFlight++;
      const { r, lost } = await untilAnswered((b) => signedCall(b, creds, 'POST', '/api/v1/orders', body)).finally(() => createsInFlight--);
      if (lost) stats.ordersRetried++;
      let id: string;
      if (r.status === 402) {
        id = r.body.order_id;
        created.push(id);
        stats.ordersAnswered402++;
      } else if (lost && r.status === 409 && r.body.code === 'order_already_exists') {
        // Committed by the process that died before answering: the merchant's retry with the same
        // dapp_order_id tells it so; the order must be there, whole.
        const { rows } = await db.query<{ id: string }>('SELECT id FROM orders WHERE dapp_order_id = $1', [body.dapp_order_id]);
        if (!rows[0]) return void problems.push(`order ${body.dapp_order_id}: 409 order_already_exists but no such row`);
        id = rows[0].id;
        stats.ordersCommittedResponseLost++;
      } else {
        return void problems.push(`create order ${body.dapp_order_id}: ${r.status} ${r.text.slice(0, 300)}`);
      }
      allOrders.push(id);
      const roll = rng.next();
      if (roll < 0.85) payLater(id, payer, wallet, BigInt(body.amount_wei));
      else if (roll < 0.92) {
        const c = await untilAnswered((b) => signedCall(b, creds, 'POST', `/api/v1/orders/${id}/cancel`, {}));
        if (c.r.status === 200 || (c.lost && c.r.status === 409)) stats.cancels++;
        else problems.push(`cancel ${id}: ${c.r.status} ${c.r.text.slice(0, 300)}`);
      } // else: left unpaid (stays live, fee reserved)
    }

    async function checkoutFlow(): Promise<void> {
      const j = nextSession++;
      const payer = j % dev.payers.length;
      // Prices 3.00, 3.01, …: never equal to another live order of the same payer (order_conflict).
      const price = `${3 + Math.floor(j / 100)}.${String(j % 100).padStart(2, '0')}`;
      const ref = `crash-${seed}-s${j}`;
      const body = {
        checkout_type: 'DIRECT',
        price,
        client_reference_id: ref,
        line_items_json: JSON.stringify([{ name: 'Item', quantity: 1, amount: price }]),
        success_url: `${RETURN_URL}/thanks`,
        cancel_url: `${RETURN_URL}/cart`,
      };
      const s = await untilAnswered((b) => signedCall(b, creds, 'POST', '/api/v1/checkout/sessions', body));
      let sid: string;
      if (s.r.status === 200) sid = s.r.body.checkout_id;
      else if (s.lost && s.r.status === 409) {
        const { rows } = await db.query<{ id: string }>('SELECT id FROM checkout_sessions WHERE client_reference_id = $1', [ref]);
        if (!rows[0]) return void problems.push(`session ${ref}: 409 after a lost response but no such row`);
        sid = rows[0].id;
      } else return void problems.push(`create session ${ref}: ${s.r.status} ${s.r.text.slice(0, 300)}`);
      stats.sessions++;
      sessions.push(sid);
      const bindBody = { chain_id: dev.chainId, token_symbol: 'USDC', from_address: payerAddress(dev, payer) };
      for (;;) {
        // A bind is idempotent for the same payer and terms: retrying after a crash yields the same order.
        const bnd = await untilAnswered((b) => fetchJson(b, 'POST', `/checkout/v1/sessions/${sid}/bind`, bindBody));
        if (bnd.lost) stats.bindsRetried++;
        if (bnd.r.status === 429) {
          stats.rateLimited++;
          await sleep(5_000);
          continue;
        }
        if (bnd.r.status !== 200) return void problems.push(`bind ${sid}: ${bnd.r.status} ${bnd.r.text.slice(0, 300)}`);
        stats.binds++;
        const t = bnd.r.body;
        allOrders.push(t.order_id);
        if (rng.chance(0.9)) payLater(t.order_id, payer, t.pay_to_address as Hex, BigInt(t.amount_wei), sid);
        return;
      }
    }

    async function poll(): Promise<void> {
      const b = gw!.base;
      if (!b) return;
      try {
        if (sessions.length > 0 && rng.chance(0.15)) {
          const sid = sessions[rng.int(0, sessions.length - 1)]!;
          const r = await fetchJson(b, 'GET', `/checkout/v1/sessions/${sid}/status`);
          if (r.status === 200) observe(`session ${sid}`, r.body.status === 'COMPLETED' ? 'INVOICED' : (r.body.order_status ?? 'CHECKOUT_VERIFIED'));
        } else if (allOrders.length > 0) {
          const id = allOrders[rng.int(0, allOrders.length - 1)]!;
          const r = await signedCall(b, creds, 'GET', `/api/v1/orders/${id}`);
          if (r.status !== 200) problems.push(`GET order ${id}: ${r.status} ${r.text.slice(0, 200)}`);
          else observe(`order ${id}`, r.body.status);
        }
        stats.polls++;
      } catch (err) {
        if (!(err instanceof Unreachable)) throw err;
        stats.pollsFailed++;
      }
    }
    /** Statuses never go backwards (no reorgs in this scenario): what a poller saw stays seen. */
    function observe(key: string, status: string) {
      const prev = lastSeen.get(key);
      if (prev && (RANK[status] ?? 0) < (RANK[prev] ?? 0)) problems.push(`${key} went back from ${prev} to ${status}`);
      if (!prev || (RANK[status] ?? 0) >= (RANK[prev] ?? 0)) lastSeen.set(key, status);
    }

    let loadStopped = false;
    const client = async (c: number) => {
      const r = seeded(seed + c + 1);
      while (!loadStopped && !gw!.halted) {
        const now = Date.now();
        if (now >= nextBindAt && r.chance(0.3)) {
          nextBindAt = now + BIND_SPACING_MS;
          await checkoutFlow();
        } else if (nextOrder < MAX_ORDERS && r.chance(0.6)) await createOrder();
        else await poll();
        await sleep(r.int(20, 250));
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) =>
      client(c).catch((err: Error) => {
        if (!gw!.halted) problems.push(`client ${c}: ${err.message}`);
      }),
    );

    // The killer: SIGKILL after a random stretch of uptime, restart at once (or after a short
    // pause). The moment is one of: any time; while an order creation is in flight (the commit
    // may or may not have happened); right after a payment was mined (the watcher is matching
    // and confirming, the dispatcher sending).
    const modes = ['any', 'mid-create', 'after-payment'] as const;
    const killModes: string[] = [];
    const loadStart = Date.now();
    for (let k = 0; k < KILLS; k++) {
      await sleep(rng.int(...GAP_MS));
      const mode = modes[k % modes.length]!;
      const until = Date.now() + 3_000;
      if (mode === 'mid-create') {
        while (createsInFlight === 0 && Date.now() < until) await sleep(1);
        await sleep(rng.int(0, 30)); // before or after the commit
      }
      if (mode === 'after-payment') {
        const since = Date.now();
        while (lastMinedAt < since && Date.now() < until) await sleep(2);
        await sleep(rng.int(0, 150));
      }
      killModes.push(mode);
      await gw!.kill();
      stats.kills++;
      await sleep(rng.int(0, 400));
      const s = Date.now();
      await gw!.start();
      stats.restartsMs.push(Date.now() - s);
    }
    await sleep(2_000);
    loadStopped = true;
    await Promise.all(clients);
    const loadMs = Date.now() - loadStart;

    // Settle: every payment mined, every paid order at finality, every paid session completed.
    await payments.settled();
    assert.deepEqual(payments.failed, [], 'every payment was mined');
    const paidSet = () => [...new Set(paid)];
    await waitUntil(
      async () => {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND status = 'INVOICED'`, [paidSet()]);
        return rows[0]!.n === paidSet().length ? true : undefined;
      },
      60_000,
      async () => {
        const { rows } = await db.query<{ id: string; status: string }>(`SELECT id, status FROM orders WHERE id = ANY($1) AND status <> 'INVOICED'`, [paidSet()]);
        return `paid orders not INVOICED: ${JSON.stringify(rows.slice(0, 10))} (${rows.length})`;
      },
    );
    if (sessionsPaid.length) {
      await waitUntil(
        async () => {
          const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM checkout_sessions WHERE id = ANY($1) AND status = 'COMPLETED'`, [sessionsPaid]);
          return rows[0]!.n === new Set(sessionsPaid).size ? true : undefined;
        },
        30_000,
        () => 'paid sessions not COMPLETED',
      );
    }

    // Drain: every event the receiver should get, it got. A delivery claimed by a process that was
    // killed before it sent comes back when its claim lapses (dispatcher lease: timeout + 60 s).
    const received = () => new Set(rx.received.map((x) => JSON.parse(x.body).id as string));
    const { drainMs, deadClaims, deadClaimWaitMs } = await drainWebhooks(db, creds.merchantId, received, { deadPids: gw!.deadPids });
    await miner.stop();
    miner = undefined;

    for (const x of rx.received) {
      if (!verifyWebhookSignature({ secret: endpointSecret, rawBody: x.body, header: x.headers['x-webhook-signature'] as string })) problems.push(`bad signature on ${x.headers['webhook-id']}`);
    }
    const violations = await checkInvariants(db, {
      merchantId: creds.merchantId,
      feeMicros: FEE_MICROS,
      ordersCreated: created,
      ordersPaid: paidSet(),
      eventsReceived: received(),
      sessionsPaid: [...new Set(sessionsPaid)],
    });
    const { rows: dup } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_attempts`);
    const summary = {
      seed,
      ...stats,
      externalKills: gw!.externalKills,
      killModes,
      ordersTotal: allOrders.length,
      paid: paidSet().length,
      sessionsPaid: new Set(sessionsPaid).size,
      webhooksReceived: rx.received.length,
      distinctEventsReceived: received().size,
      deliveryAttempts: dup[0]!.n,
      deadClaims,
      deadClaimWaitMs,
      loadMs,
      drainMs,
      totalMs: Date.now() - t0,
      // error-level log lines of all incarnations (pino level 50+): informative, not a failure
      processErrorLines: gw!
        .allOutput()
        .join('\n')
        .split('\n')
        .filter((l) => /"level":(5|6)0/.test(l)).length,
    };
    console.log(`crash summary ${JSON.stringify(summary)}`);
    const logs = gw!.allOutput();
    assert.deepEqual([...problems, ...violations], [], `seed ${seed}; last process output:\n${logs.map((o) => o.slice(-1500)).join('\n---\n')}`);
    assert.equal(stats.kills, KILLS);
    assert.ok(paidSet().length > 0 && sessionsPaid.length > 0, 'the load paid orders and sessions');
  });
});

/** An unsigned JSON request (the hosted page's public routes). */
function fetchJson(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  return call(base, method, path, body !== undefined ? { body } : {});
}
