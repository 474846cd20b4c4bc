/**
 * Database cost of one /metrics scrape (metrics/repo.ts: orders by status and flow, live and all,
 * webhook backlog, chain cursors) as the orders table grows, on Postgres and on PGlite. Rows are inserted
 * with generate_series (1 % live, the rest terminal, as in a long-running deployment) plus a webhook
 * backlog of BENCH_BACKLOG undelivered rows; each size reports the median of 5 scrapes.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test BENCH_ORDERS=100000,1000000 npx tsx bench/metrics-scrape.ts
 */
import type { Database } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { openPglite } from '../apps/server/src/db/pglite.ts';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { chainCursors, countLiveOrders, countOrders, webhookBacklog } from '../apps/server/src/metrics/repo.ts';
import { scratchDb } from './lib/db.ts';
import { median } from './lib/load.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SIZES = (process.env.BENCH_ORDERS ?? '10000,100000,1000000').split(',').map(Number);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1000);
const BACKENDS = (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',');

async function seed(db: Database) {
  await migrate(db);
  await db.exec(`INSERT INTO merchants (id, name) VALUES ('m1', 'Bench');
    INSERT INTO webhook_endpoints (id, merchant_id, url, events, secret_ciphertext, enabled)
      VALUES ('we_1', 'm1', 'https://example.com/hook', ARRAY['order.invoiced'], 'unused', true);
    INSERT INTO webhook_events (id, merchant_id, event, payload, created_at) SELECT 'evt_' || g, 'm1', 'order.invoiced', '{}', now() FROM generate_series(1, ${BACKLOG}) g;
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, event, status, next_attempt_at, created_at)
      SELECT 'wd_' || g, 'evt_' || g, 'we_1', 'm1', 'order.invoiced', 'failed', now() + interval '1 minute', now() - interval '1 hour' FROM generate_series(1, ${BACKLOG}) g;
    INSERT INTO chain_cursors (chain_id, block_number, block_hash, block_timestamp) VALUES (1, 1, '0x00', now())`);
}

async function grow(db: Database, from: number, to: number) {
  // 1 % live (orders expire within minutes), the rest terminal: a long-running deployment.
  const statuses = `CASE WHEN g % 100 = 0 THEN 'CHECKOUT_VERIFIED' ELSE (ARRAY['INVOICED','INVOICED','EXPIRED','CANCELLED'])[1 + g % 4] END`;
  for (let lo = from; lo < to; lo += 20_000) {
    const hi = Math.min(to, lo + 20_000);
    await db.exec(`INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
        from_address, pay_to_address, amount_wei, fee_amount, status, expires_at)
      SELECT 'ord_' || g, 'm1', 'd' || g, 'ERC20_DIRECT', 1, 1, 'USDC', '0x${'22'.repeat(20)}', 6,
        '0x${'33'.repeat(20)}', '0x${'44'.repeat(20)}', g, 0, ${statuses}, now() FROM generate_series(${lo + 1}, ${hi}) g`);
  }
  await db.exec('ANALYZE');
}

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

/** Milliseconds of each read alone, then of the three as a scrape runs them (concurrently). */
async function scrapeMs(db: Database): Promise<number[]> {
  return [
    await timed(() => countOrders(db)),
    await timed(() => countLiveOrders(db)),
    await timed(() => webhookBacklog(db, new Date())),
    await timed(() => chainCursors(db)),
    await timed(() => Promise.all([countLiveOrders(db), webhookBacklog(db, new Date()), chainCursors(db)])),
  ];
}

for (const backend of BACKENDS) {
  const scratch = backend === 'postgres' ? await scratchDb(BASE_DB) : undefined;
  const db = scratch ? await openPostgres(scratch.url) : await openPglite(undefined);
  try {
    await seed(db);
    let have = 0;
    for (const n of SIZES) {
      await grow(db, have, n);
      have = n;
      await scrapeMs(db); // warm the cache and the plans
      const runs: number[][] = [];
      for (let i = 0; i < 5; i++) runs.push(await scrapeMs(db));
      const ms = (i: number) => median(runs.map((r) => r[i]!)).toFixed(1);
      console.log(`${backend}: ${n} orders, ${BACKLOG} undelivered: all orders ${ms(0)} ms, live orders ${ms(1)} ms, backlog ${ms(2)} ms, cursors ${ms(3)} ms, a scrape without the all-orders count ${ms(4)} ms (medians of 5)`);
    }
  } finally {
    await db.close();
    await scratch?.drop();
  }
}
