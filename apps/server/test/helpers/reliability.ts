// Shared pieces of the reliability suite (crash.test.ts, multi-process.test.ts): seeded
// randomness, a gateway client that survives a dead process, merchant setup over the admin API,
// serialized payments per payer, a background miner, and the end-of-run invariants read from the
// database. Tollgate itself runs as child processes (helpers/process.ts).
import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mine, rpcRequest, transferToken, type DevChain } from '@tollgate/devchain';
import { signedHeaders } from '@tollgate/protocol';
import type { Hex } from 'viem';
import type { Queryable } from '../../src/db/database.ts';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import { TEST_ADMIN_TOKEN } from './server.ts';
import { sleep, waitFor } from './wait.ts';

/** TOLLGATE_LONG=1 (`npm run test:faults`) runs the long versions of the fault scenarios. */
export const LONG = process.env.TOLLGATE_LONG === '1';

/**
 * The run's seed: TOLLGATE_SEED when set (to replay a failure), else a fresh one. Printed by the
 * caller so a failing run can be repeated with the same choices (timing still varies).
 */
export function runSeed(): number {
  const s = process.env.TOLLGATE_SEED;
  return s ? Number(s) >>> 0 : randomInt(2 ** 31);
}

/** mulberry32: a small seeded PRNG, [0, 1). */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** Integer in [lo, hi]. */
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
  };
}

/** Writes the JSON config file (README "Configuration") with the devchain as its only chain. */
export function writeGatewayConfig(dir: string, dev: DevChain, chain: { confirmations: number; finality: number; pollMs: number }, feePerOrder = '0.01'): string {
  const path = join(dir, 'tollgate.json');
  writeFileSync(
    path,
    JSON.stringify({
      environment: 'test',
      order_ttl_seconds: 3600,
      fees: { per_order: feePerOrder },
      chains: [
        {
          chain_id: dev.chainId,
          rpc_url: dev.rpcUrl,
          confirmations: chain.confirmations,
          finality_confirmations: chain.finality,
          poll_interval_ms: chain.pollMs,
          tokens: dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase(), decimals: t.decimals })),
        },
      ],
    }),
  );
  return path;
}

export interface Creds {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
}

export interface Reply {
  status: number;
  body: any;
  text: string;
}

/** A network-level failure (connection refused/reset, timeout): the process is down or died mid-request. */
export class Unreachable extends Error {}

/**
 * One HTTP call to a gateway; a network failure throws {@link Unreachable} (the caller decides
 * whether to retry: the request may or may not have been committed).
 */
export async function call(base: string, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Reply> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(base + path, {
      method,
      headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
    });
    text = await res.text();
  } catch (err) {
    throw new Unreachable(`${method} ${path}: ${(err as Error).message}${(err as { cause?: Error }).cause ? ` (${(err as { cause: Error }).cause.message})` : ''}`);
  }
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, text };
}

export const adminCall = (base: string, method: string, path: string, body?: unknown) => call(base, method, path, { ...(body !== undefined ? { body } : {}), headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });

/** A merchant-HMAC call, freshly signed (new nonce) on every invocation. */
export function signedCall(base: string, creds: Creds, method: string, path: string, body?: Record<string, unknown>): Promise<Reply> {
  const headers = signedHeaders({ apiKey: creds.apiKey, apiSecret: creds.apiSecret, body });
  return call(base, method, path, { ...(body !== undefined ? { body } : {}), headers });
}

function expect(r: Reply, status: number, what: string): any {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text}`);
  return r.body;
}

export const RETURN_URL = 'https://shop.example/checkout';

/**
 * A merchant with a receiving wallet for every token, `topUp` of fee balance, the shop's return
 * URLs allowlisted and one webhook endpoint for `events`. Returns its credentials and the
 * endpoint (id, secret).
 */
export async function setupGatewayMerchant(base: string, dev: DevChain, o: { wallet: Hex; topUp: string; webhookUrl: string; events: string[] }): Promise<{ creds: Creds; endpointId: string; endpointSecret: string }> {
  const m = expect(await adminCall(base, 'POST', '/admin/v1/merchants', { name: 'Reliability Shop' }), 201, 'create merchant');
  const creds = { merchantId: m.merchant_id as string, apiKey: m.api_key as string, apiSecret: m.api_secret as string };
  for (const t of dev.tokens) {
    expect(await adminCall(base, 'POST', `/admin/v1/merchants/${creds.merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: t.symbol, address: o.wallet }), 201, 'add wallet');
  }
  expect(await adminCall(base, 'POST', `/admin/v1/merchants/${creds.merchantId}/fee-balance/top-ups`, { amount: o.topUp }), 200, 'top up');
  expect(await adminCall(base, 'PUT', `/admin/v1/merchants/${creds.merchantId}/return-urls`, { return_urls: [RETURN_URL] }), 200, 'return urls');
  const ep = expect(await adminCall(base, 'POST', `/admin/v1/merchants/${creds.merchantId}/webhooks`, { url: o.webhookUrl, events: o.events }), 201, 'webhook endpoint');
  return { creds, endpointId: ep.webhook_id ?? ep.id, endpointSecret: ep.secret };
}

/**
 * Token payments on the devchain, serialized per payer (one nonce sequence each) and parallel
 * across payers; each resolves once its transaction is mined.
 */
export class Payments {
  private readonly queues = new Map<number, Promise<unknown>>();
  private readonly all = new Set<Promise<unknown>>();
  sent = 0;
  failed: string[] = [];
  private readonly dev: DevChain;

  constructor(dev: DevChain) {
    this.dev = dev;
  }

  pay(payer: number, to: Hex, amount: bigint, token: 'USDC' | 'USDT' = 'USDC'): Promise<Hex | undefined> {
    const prev = this.queues.get(payer) ?? Promise.resolve();
    const p = prev.then(async () => {
      try {
        const hash = await transferToken({
          rpcUrl: this.dev.rpcUrl,
          chainId: this.dev.chainId,
          privateKey: this.dev.payers[payer]!.privateKey,
          token: this.dev.tokens.find((t) => t.symbol === token)!.address,
          to,
          amount,
        });
        const deadline = Date.now() + 20_000;
        while (!(await rpcRequest<unknown>(this.dev.rpcUrl, 'eth_getTransactionReceipt', [hash]))) {
          if (Date.now() > deadline) throw new Error(`payment ${hash} not mined in 20 s`);
          await sleep(10);
        }
        this.sent++;
        return hash;
      } catch (err) {
        this.failed.push(`payer ${payer} → ${to} ${amount}: ${(err as Error).message}`);
        return undefined;
      }
    });
    this.queues.set(payer, p);
    this.all.add(p);
    void p.finally(() => this.all.delete(p));
    return p;
  }

  /** Resolves when every payment asked for so far is mined (or failed). */
  async settled(): Promise<void> {
    while (this.all.size > 0) await Promise.all([...this.all]);
  }
}

/** Mines one block every `everyMs` (payments are automined; this moves them to finality). */
export function startMiner(rpcUrl: string, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await mine(rpcUrl, 1).catch(() => {});
      // Unref'd: a test that times out before stop() must not keep its file running forever (a
      // multi-process run that timed out on a loaded machine never ended, mining a dead chain).
      await new Promise<void>((r) => setTimeout(r, everyMs).unref());
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/**
 * helpers/wait.ts's waitFor in the fault suites' argument order: polls `probe` until it returns a
 * value other than undefined, or fails after `timeoutMs` with `describe()`.
 */
export function waitUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number, describe: () => Promise<string> | string, everyMs = 200): Promise<T> {
  return waitFor(describe, probe, (v) => v !== undefined, { timeoutMs, everyMs }) as Promise<T>;
}

export interface InvariantInput {
  merchantId: string;
  feeMicros: bigint;
  /** Order ids that were answered 402 (or found committed after a lost response). */
  ordersCreated: string[];
  /** Order ids that were paid in full on chain. */
  ordersPaid: string[];
  /** Event ids (`evt_…`) the receiver got. */
  eventsReceived: Set<string>;
  /** Sessions that were bound and whose order was paid. */
  sessionsPaid?: string[];
}

/**
 * The end-of-run invariants of the reliability suite, as a list of violations (empty = pass):
 * nothing lost (every 402'd order exists; every paid order INVOICED; every invoiced/completed
 * event received), nothing counted twice (one INVOICED transition and one `order.invoiced` event
 * per order, one completion per session), the fee ledger balances and captured = fee × invoiced.
 */
export async function checkInvariants(q: Queryable, i: InvariantInput): Promise<string[]> {
  const v: string[] = [];
  const one = async <T>(sql: string, params: unknown[] = []) => (await q.query<T>(sql, params)).rows;

  const existing = new Set((await one<{ id: string }>('SELECT id FROM orders WHERE id = ANY($1)', [i.ordersCreated])).map((r) => r.id));
  for (const id of i.ordersCreated) if (!existing.has(id)) v.push(`order ${id} was answered 402 but does not exist`);

  const inv = await one<{ id: string; status: string; n: number }>(
    `SELECT o.id, o.status, (SELECT count(*)::int FROM order_transitions t WHERE t.order_id = o.id AND t.to_status = 'INVOICED') AS n
     FROM orders o WHERE o.id = ANY($1)`,
    [i.ordersPaid],
  );
  for (const r of inv) {
    if (r.status !== 'INVOICED') v.push(`paid order ${r.id} is ${r.status}, not INVOICED`);
    if (r.n !== 1) v.push(`paid order ${r.id} has ${r.n} INVOICED transitions`);
  }
  if (inv.length !== i.ordersPaid.length) v.push(`${i.ordersPaid.length - inv.length} paid orders are missing`);

  const paid = new Set(i.ordersPaid);
  const invoiced = await one<{ id: string }>(`SELECT id FROM orders WHERE merchant_id = $1 AND status = 'INVOICED'`, [i.merchantId]);
  for (const r of invoiced) if (!paid.has(r.id)) v.push(`order ${r.id} is INVOICED but was never paid`);
  for (const r of await one<{ order_id: string; n: number }>(`SELECT order_id, count(*)::int AS n FROM order_transitions WHERE to_status = 'INVOICED' GROUP BY 1 HAVING count(*) > 1`)) {
    v.push(`order ${r.order_id} has ${r.n} INVOICED transitions`);
  }

  const events = await one<{ id: string; event: string; order_id: string | null }>(`SELECT id, event, order_id FROM webhook_events WHERE merchant_id = $1 AND event IN ('order.invoiced', 'quickpay.checkout.completed')`, [i.merchantId]);
  const invoicedEvents = new Map<string, number>();
  for (const e of events) {
    if (!i.eventsReceived.has(e.id)) v.push(`${e.event} event ${e.id} (order ${e.order_id}) never reached the receiver`);
    if (e.event === 'order.invoiced') invoicedEvents.set(e.order_id!, (invoicedEvents.get(e.order_id!) ?? 0) + 1);
  }
  for (const r of invoiced) {
    const n = invoicedEvents.get(r.id) ?? 0;
    if (n !== 1) v.push(`INVOICED order ${r.id} has ${n} order.invoiced events`);
  }

  for (const m of await findLedgerImbalances(q)) v.push(`fee ledger imbalance: ${JSON.stringify(m)}`);
  const [acct] = await one<{ captured: string }>('SELECT captured::text AS captured FROM fee_accounts WHERE merchant_id = $1', [i.merchantId]);
  const expectCaptured = i.feeMicros * BigInt(invoiced.length);
  if (BigInt(acct?.captured ?? '0') !== expectCaptured) v.push(`fee captured ${acct?.captured} ≠ fee × invoiced orders = ${expectCaptured}`);
  for (const r of await one<{ order_id: string; kinds: string }>(`SELECT order_id, string_agg(kind, ',' ORDER BY kind) AS kinds FROM fee_ledger WHERE merchant_id = $1 AND order_id IS NOT NULL GROUP BY 1`, [i.merchantId])) {
    if (r.kinds.includes('capture') && r.kinds.includes('release')) v.push(`order ${r.order_id}: fee both captured and released (${r.kinds})`);
  }

  for (const r of await one<{ id: string; order_id: string | null; order_status: string | null }>(
    `SELECT s.id, s.order_id, o.status AS order_status FROM checkout_sessions s LEFT JOIN orders o ON o.id = s.order_id
     WHERE s.merchant_id = $1 AND s.status = 'COMPLETED' AND (o.status IS DISTINCT FROM 'INVOICED')`,
    [i.merchantId],
  )) {
    v.push(`session ${r.id} is COMPLETED but its order ${r.order_id} is ${r.order_status}`);
  }
  if (i.sessionsPaid?.length) {
    for (const r of await one<{ id: string; status: string; n: number }>(
      `SELECT s.id, s.status, (SELECT count(*)::int FROM checkout_transitions t WHERE t.checkout_id = s.id AND t.to_status = 'COMPLETED') AS n
       FROM checkout_sessions s WHERE s.id = ANY($1)`,
      [i.sessionsPaid],
    )) {
      if (r.status !== 'COMPLETED' || r.n !== 1) v.push(`paid session ${r.id} is ${r.status} with ${r.n} COMPLETED transitions`);
    }
  }
  return v;
}

/**
 * Waits until the webhook outbox of `merchantId` has drained: every delivery `delivered` and every
 * event among `received()`. A delivery claimed by a process killed before it sent (or before it
 * recorded the send) is due again only when its claim lapses (dispatcher lease: send timeout +
 * 60 s), so the wait extends to that lapse + 15 s; otherwise it gives up after `baseMs` past the
 * last due retry. Returns how long it took and how long it waited on claims of `deadPids`
 * (dispatcher ids are `host:pid:random`).
 */
export async function drainWebhooks(q: Queryable, merchantId: string, received: () => Set<string>, o: { deadPids?: ReadonlySet<number>; baseMs?: number } = {}): Promise<{ drainMs: number; deadClaims: number; deadClaimWaitMs: number }> {
  const start = Date.now();
  const baseMs = o.baseMs ?? 30_000;
  const dead = new Set<string>();
  let deadSince: number | undefined;
  let deadClaimWaitMs = 0;
  for (;;) {
    const got = received();
    const { rows } = await q.query<{ id: string; delivery: string; locked_by: string | null; locked_until: Date | null; next_attempt_at: Date | null; status: string }>(
      `SELECT e.id, d.id AS delivery, d.locked_by, d.locked_until, d.next_attempt_at, d.status
       FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.merchant_id = $1`,
      [merchantId],
    );
    const missing = rows.filter((r) => !got.has(r.id));
    const undelivered = rows.filter((r) => r.status !== 'delivered');
    const deadNow = undelivered.filter((r) => r.locked_by && o.deadPids?.has(Number(r.locked_by.split(':').at(-2))));
    for (const r of deadNow) dead.add(r.delivery);
    if (deadNow.length > 0) deadSince ??= Date.now();
    else if (deadSince !== undefined) {
      deadClaimWaitMs += Date.now() - deadSince;
      deadSince = undefined;
    }
    if (missing.length === 0 && undelivered.length === 0) return { drainMs: Date.now() - start, deadClaims: dead.size, deadClaimWaitMs };
    const due = Math.max(0, ...undelivered.map((r) => r.next_attempt_at?.getTime() ?? 0)); // a claim moves next_attempt_at to its lapse
    const deadline = Math.max(start + baseMs, Math.min(due, start + 120_000) + 15_000);
    if (Date.now() > deadline) {
      throw new Error(`webhooks did not drain: ${missing.length} events never received (${JSON.stringify(missing.slice(0, 5))}), ${undelivered.length} deliveries not delivered (${JSON.stringify(undelivered.slice(0, 5))})`);
    }
    await sleep(250);
  }
}
