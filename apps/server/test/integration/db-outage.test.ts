// Database outage: Tollgate on a PRIVATE PostgreSQL cluster (its own initdb, port and data directory,
// so stopping it disturbs no other test file), under a light load of signed order creation, status
// reads and admin reads. The cluster is stopped for DB_OUTAGE_SECONDS (5 in CI, 30 with
// TOLLGATE_LONG=1), then started again. Invariants:
//   - during the outage every request is answered promptly (< REQUEST_BOUND_MS) with 503
//     service_unavailable in the error envelope, never a 500 and never a hang; /readyz is 503;
//   - afterwards everything resumes WITHOUT restarting Tollgate (same process, same pool);
//   - nothing is lost or doubled: every order that got a 402 exists; every create that failed is
//     retried with the same dapp_order_id and ends with exactly one order (402, or 409
//     order_already_exists when the first attempt had committed); the fee ledger balances and
//     reserves exactly one fee per order.
// Postgres only: runs when TEST_DATABASE_URL is set or TOLLGATE_TEST_STRICT=1 (then a missing
// initdb/pg_ctl is a failure), skips otherwise like every Postgres test.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { startTollgate, type Tollgate } from '../../src/main.ts';
import { env } from '../helpers/env.ts';
import { buildOrderBody, MERCHANT_WALLET } from '../helpers/orders.ts';
import { requirePgCluster, startPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import { buildConfig, fakeChain, TEST_ADMIN_TOKEN, type Creds } from '../helpers/server.ts';
import { sleep } from '../helpers/wait.ts';

const LONG = process.env.TOLLGATE_LONG === '1';
const OUTAGE_SECONDS = Number(process.env.DB_OUTAGE_SECONDS ?? (LONG ? 30 : 5));
/** No request may take longer than this, outage or not (pool connect timeout is 5 s). */
const REQUEST_BOUND_MS = 6_000;
/** A frozen server (a black-holed network): longer than REQUEST_BOUND_MS, so a hang would show. */
const FREEZE_SECONDS = Math.max(OUTAGE_SECONDS, 10);
/** Load loops running at once. */
const WORKERS = 4;

const runs = Boolean(env.TEST_DATABASE_URL) || env.TOLLGATE_TEST_STRICT === '1';
const available = runs && requirePgCluster();

interface Sample {
  at: number;
  phase: 'before' | 'outage' | 'after';
  kind: 'create' | 'status' | 'admin' | 'readyz';
  status: number;
  ms: number;
  code?: string;
  requestId?: string;
}

describe('database outage on a private PostgreSQL cluster', { skip: !available && 'needs TEST_DATABASE_URL (or TOLLGATE_TEST_STRICT=1) and initdb/pg_ctl' }, () => {
  let pg: PgCluster;
  let tg: Tollgate;
  let m: Creds;
  let base: string;
  const FEE = 10_000n;

  before(async () => {
    pg = await startPgCluster();
    // Tollgate opens the database itself (production pool settings) and migrates it.
    tg = await startTollgate(buildConfig({ databaseUrl: pg.url, chains: [fakeChain()] }), { http: { logger: false, rateLimits: false } });
    base = tg.url!;
    const admin = (method: string, path: string, body?: unknown) => call(method, path, body, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
    const r = await admin('POST', '/admin/v1/merchants', { name: 'Outage merchant' });
    assert.equal(r.status, 201, r.text);
    m = { merchantId: r.body.merchant_id, apiKey: r.body.api_key, apiSecret: r.body.api_secret };
    assert.equal((await admin('POST', `/admin/v1/merchants/${m.merchantId}/fee-balance/top-ups`, { amount: '100000.00' })).status, 200);
    const w = await admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: MERCHANT_WALLET });
    assert.equal(w.status, 201, w.text);
  });
  after(async () => {
    await tg?.close().catch(() => {});
    await pg?.destroy();
  });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(base + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, text };
  }
  const signed = (method: string, path: string, body?: Record<string, unknown>) => call(method, path, body, { ...signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, ...(body ? { body } : {}) }) });

  /** Distinct amounts across scenarios: two live orders of one payer and amount would be an order_conflict. */
  let amount = 5_000_000;

  /**
   * One outage under load: `begin` takes the database away, `end` brings it back after `seconds`.
   */
  async function outageUnderLoad(label: string, seconds: number, begin: () => Promise<void>, end: () => Promise<void>) {
    const samples: Sample[] = [];
    let phase: Sample['phase'] = 'before';
    let stop = false;
    /** 402 → order id, by dapp_order_id; failed creates keep their body for the retry. */
    const created = new Map<string, string>();
    const failedCreates = new Map<string, Record<string, unknown>>();

    const timed = async (kind: Sample['kind'], fn: () => Promise<{ status: number; body: any }>) => {
      const t0 = Date.now();
      const r = await fn();
      const ms = Date.now() - t0;
      // The phase when the answer came: a request in flight when the database went away is an outage one.
      const s: Sample = { at: t0, phase, kind, status: r.status, ms, code: r.body?.code, requestId: r.body?.request_id };
      samples.push(s);
      return { ...r, ms };
    };
    // Odd loops probe readiness before the admin read, even ones after it: loops that run in step
    // (they start together and the database answers them alike) then never all send /readyz next,
    // so some request the outage must refuse is always in flight when it begins. (All four loops
    // on /readyz at the freeze left no create, status or admin request inside the outage once.)
    const loop = async (_: unknown, i: number) => {
      const admin = () => timed('admin', () => call('GET', `/admin/v1/merchants/${m.merchantId}`, undefined, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }));
      const readyz = () => timed('readyz', () => call('GET', '/readyz'));
      while (!stop) {
        const body = buildOrderBody({ amount_wei: String(amount++) });
        const c = await timed('create', () => signed('POST', '/api/v1/orders', body));
        if (c.status === 402) {
          created.set(body.dapp_order_id as string, c.body.order_id);
          await timed('status', () => signed('GET', `/api/v1/orders/${c.body.order_id}`));
        } else failedCreates.set(body.dapp_order_id as string, body);
        if (i % 2 === 1) await readyz();
        await admin();
        if (i % 2 === 0) await readyz();
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    const loops = Array.from({ length: WORKERS }, loop);
    await sleep(1500);
    phase = 'outage';
    const outageStart = Date.now();
    await begin();
    await sleep(500);
    // Readiness reports the outage, promptly.
    const probe = await timed('readyz', () => call('GET', '/readyz'));
    await sleep(Math.max(0, seconds * 1000 - 500 - probe.ms));
    await end();
    phase = 'after';
    const restartedAt = Date.now();
    // Recovery without restarting Tollgate: the first successful create after the restart.
    let recoveredAt: number | undefined;
    while (Date.now() - restartedAt < 20_000) {
      const ok = samples.find((s) => s.phase === 'after' && s.kind === 'create' && s.status === 402);
      if (ok) {
        recoveredAt = ok.at + ok.ms;
        break;
      }
      await sleep(100);
    }
    await sleep(1500);
    stop = true;
    await Promise.all(loops);

    const during = samples.filter((s) => s.phase === 'outage');
    const by = (p: Sample['phase']) => samples.filter((s) => s.phase === p);
    const summary = {
      label,
      outageSeconds: seconds,
      requests: samples.length,
      before: by('before').length,
      during: during.length,
      after: by('after').length,
      statuses: Object.fromEntries([...new Set(samples.map((s) => `${s.phase}:${s.status}`))].map((k) => [k, samples.filter((s) => `${s.phase}:${s.status}` === k).length])),
      maxMs: Math.max(...samples.map((s) => s.ms)),
      maxMsDuringOutage: Math.max(0, ...during.map((s) => s.ms)),
      recoveryMs: recoveredAt ? recoveredAt - restartedAt : undefined,
      created: created.size,
      failedCreates: failedCreates.size,
      outageMs: restartedAt - outageStart,
    };
    console.log(`[db-outage] ${JSON.stringify(summary)}`);

    // Every request answered in bounded time, never a 500.
    for (const s of samples) {
      assert.ok(s.ms < REQUEST_BOUND_MS, `a ${s.kind} request took ${s.ms} ms (${s.phase})`);
      assert.ok(s.status < 500 || s.status === 503, `${s.kind} answered ${s.status} ${s.code} (${s.phase})`);
      if (s.status === 503) {
        assert.equal(s.code, 'service_unavailable', `${s.kind}: 503 with code ${s.code}`);
        assert.match(s.requestId ?? '', /^req_/, `${s.kind}: 503 without request_id`);
      }
    }
    // Before the outage everything worked; the outage was real (503s seen, /readyz 503).
    assert.ok(by('before').length > 0 && by('before').every((s) => s.status < 500), 'before the outage: no failures');
    assert.ok(
      during.some((s) => s.kind !== 'readyz' && s.status === 503),
      'the outage produced 503s',
    );
    assert.equal(probe.status, 503, '/readyz is 503 during the outage');
    // Resumed without a restart of Tollgate: within 15 s, and /readyz ready again.
    assert.ok(recoveredAt !== undefined && recoveredAt - restartedAt < 15_000, `recovered ${summary.recoveryMs} ms after the restart`);
    const tail = samples.filter((s) => recoveredAt !== undefined && s.at > recoveredAt + 500);
    assert.ok(tail.length > 0 && tail.every((s) => s.status < 500), 'after recovery every request succeeds');
    assert.equal((await call('GET', '/readyz')).status, 200);

    // Retry every create that failed, with the same dapp_order_id: it lands exactly once.
    for (const [dapp, body] of failedCreates) {
      const r = await signed('POST', '/api/v1/orders', body);
      assert.ok(r.status === 402 || (r.status === 409 && r.body.code === 'order_already_exists'), `retry of ${dapp}: ${r.status} ${r.text}`);
      if (r.status === 402) created.set(dapp, r.body.order_id);
    }
    const db = tg.deps.db;
    for (const [dapp, id] of created) {
      const { rows } = await db.query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE merchant_id = $1 AND dapp_order_id = $2', [m.merchantId, dapp]);
      assert.deepEqual(rows, [{ id, status: 'CHECKOUT_VERIFIED' }], `order ${dapp} that got a 402 exists exactly once`);
    }
    // This scenario's orders: one per dapp_order_id the client sent, none it did not.
    const sent = [...new Set([...created.keys(), ...failedCreates.keys()])];
    const { rows: mine } = await db.query<{ n: number; distinct_dapp: number }>('SELECT count(*)::int AS n, count(DISTINCT dapp_order_id)::int AS distinct_dapp FROM orders WHERE merchant_id = $1 AND dapp_order_id = ANY($2)', [m.merchantId, sent]);
    assert.equal(mine[0]!.n, mine[0]!.distinct_dapp, 'no duplicate order');
    assert.equal(mine[0]!.n, sent.length, 'every order the client sent exists exactly once');
    const { rows: counts } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [m.merchantId]);
    assert.deepEqual(await findLedgerImbalances(db), []);
    const fee = (await getFeeBalance(db, m.merchantId))!;
    assert.equal(fee.reserved, FEE * BigInt(counts[0]!.n), 'exactly one fee reserve per order');
  }

  it(`answers 503 promptly while the server is stopped (${OUTAGE_SECONDS} s, pg_ctl stop -m fast) and loses nothing`, { timeout: (OUTAGE_SECONDS + 80) * 1000 }, () =>
    outageUnderLoad(
      'stopped',
      OUTAGE_SECONDS,
      () => pg.stop('fast'),
      () => pg.start(),
    ),
  );

  it(`answers 503 promptly while the server is frozen (SIGSTOP: connections hang, nothing refuses) and loses nothing`, { timeout: (FREEZE_SECONDS + 80) * 1000 }, () =>
    outageUnderLoad(
      'frozen',
      FREEZE_SECONDS,
      () => pg.signal('SIGSTOP'),
      () => pg.signal('SIGCONT'),
    ),
  );
});
