/**
 * Merchant portal at scale on PostgreSQL: one merchant with 1,000,000 orders over a year (plus a
 * second merchant's 100,000), served by a real `tollgate serve --role api` child process.
 *   1. The orders list through HTTP with a portal session: latency p50/p95 of the first page, of
 *      filtered pages (status, token + month, rare status + token), of searches (tx hash, payer,
 *      dapp_order_id) and of deep keyset pages (following `next` 40 times).
 *   2. The CSV export of the whole year (1,000,000 rows) streamed to this process, which reads and
 *      discards it: rows, bytes, seconds, and the server's RSS (from /proc) sampled every 50 ms.
 *
 *   BENCH_ORDERS=1000000 BENCH_REPEAT=100 npx tsx bench/portal.ts
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { adminCall } from '../apps/server/test/helpers/reliability.ts';
import { startGateway } from './lib/gateway.ts';
import { scratchDb } from './lib/db.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(process.env.BENCH_ORDERS ?? 1_000_000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 100);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** Orders spread over 359 days (one every 31 s), statuses and two tokens in fixed proportions. */
function fillSql(prefix: string, first: number, count: number) {
  return `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
      from_address, pay_to_address, amount_wei, fee_amount, status, expires_at, tx_hash, log_index, block_number, paid_amount_wei, created_at, updated_at)
    SELECT '${prefix}' || lpad(g::text, 9, '0'), $1, 'dapp-' || g, 'DIRECT', 31337, 31337,
      CASE WHEN g % 4 = 0 THEN 'USDT' ELSE 'USDC' END, '0x5fbdb2315678afecb367f032d93f642f64180aa3', 6,
      '0x' || lpad(to_hex(g % 50000), 40, '0'), '0x1111111111111111111111111111111111111111', 1000000 + g, 10000,
      (ARRAY['INVOICED','INVOICED','INVOICED','EXPIRED','CANCELLED','PAYMENT_CONFIRMED','FAILED'])[1 + g % 7],
      now() - g * interval '31 seconds' + interval '1 hour',
      CASE WHEN g % 7 IN (0, 1, 2, 5) THEN '0x' || md5('${prefix}' || g) || md5(g::text) END,
      CASE WHEN g % 7 IN (0, 1, 2, 5) THEN 0 END, CASE WHEN g % 7 IN (0, 1, 2, 5) THEN 1000 + g END,
      CASE WHEN g % 7 IN (0, 1, 2, 5) THEN 1000000 + g END,
      now() - g * interval '31 seconds', now()
    FROM generate_series(${first}, ${first + count - 1}) g`;
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]);
}

async function main() {
  const db = await scratchDb(BASE_DB);
  const gw = await startGateway(db.url);
  try {
    const m = await gw.merchant('Portal bench');
    const other = await gw.merchant('Other merchant');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    let t = Date.now();
    for (let done = 0; done < N; done += 250_000) {
      await c.query(fillSql('ord_b', done + 1, Math.min(250_000, N - done)), [m.merchantId]);
    }
    await c.query(fillSql('ord_o', 1, Math.round(N / 10)), [other.merchantId]);
    await c.query('ANALYZE orders');
    console.log(`filled ${N} + ${Math.round(N / 10)} orders in ${((Date.now() - t) / 1000).toFixed(0)} s`);
    const {
      rows: [sample],
    } = await c.query(`SELECT tx_hash, from_address, dapp_order_id FROM orders WHERE merchant_id = $1 AND tx_hash IS NOT NULL ORDER BY created_at LIMIT 1 OFFSET ${Math.floor(N / 3)}`, [m.merchantId]);

    const u = (await adminCall(gw.url, 'POST', `/admin/v1/merchants/${m.merchantId}/portal-users`, { email: 'bench@example.com' })).body;
    const login = await fetch(`${gw.url}/portal/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: u.password }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const get = async (path: string) => {
      const s = performance.now();
      const r = await fetch(`${gw.url}${path}`, { headers: { cookie } });
      const body = await r.json();
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - s, body };
    };
    const day = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString().slice(0, 10);
    const cases: [string, string][] = [
      ['first page, no filter', '/portal/api/orders?limit=25'],
      ['status=INVOICED', '/portal/api/orders?status=INVOICED&limit=25'],
      ['token=USDT, one month 6 months ago', `/portal/api/orders?token=USDT&from=${day(190)}&to=${day(160)}&limit=25`],
      ['status=FAILED, token=USDT (1 in 28)', '/portal/api/orders?status=FAILED&token=USDT&limit=25'],
      ['status=FAILED, token=USDT, one month', `/portal/api/orders?status=FAILED&token=USDT&from=${day(190)}&to=${day(160)}&limit=25`],
      ['status=CHECKOUT_VERIFIED (no such order)', '/portal/api/orders?status=CHECKOUT_VERIFIED&limit=25'],
      ['search: tx hash', `/portal/api/orders?q=${sample.tx_hash}`],
      ['search: payer address (20 orders)', `/portal/api/orders?q=${sample.from_address}`],
      ['search: dapp_order_id', `/portal/api/orders?q=${sample.dapp_order_id}`],
    ];
    for (const [name, path] of cases) {
      for (let i = 0; i < 5; i++) await get(path); // warm-up (plans, caches)
      const ms: number[] = [];
      let rows = 0;
      for (let i = 0; i < REPEAT; i++) {
        const r = await get(path);
        ms.push(r.ms);
        rows = r.body.orders.length;
      }
      console.log(`${name.padEnd(44)} rows ${String(rows).padStart(3)}  p50 ${pct(ms, 50).toFixed(1)} ms  p95 ${pct(ms, 95).toFixed(1)} ms`);
    }
    // Deep keyset pages: follow `next` 40 times, REPEAT/20 rounds.
    const deep: number[] = [];
    for (let round = 0; round < Math.max(1, REPEAT / 20); round++) {
      let next: string | null = null;
      for (let i = 0; i < 40; i++) {
        const r: { ms: number; body: { next: string | null } } = await get(`/portal/api/orders?status=EXPIRED&limit=100${next ? `&cursor=${next}` : ''}`);
        deep.push(r.ms);
        next = r.body.next;
      }
    }
    console.log(`${'status=EXPIRED, pages 1-40 of 100 (cursor)'.padEnd(44)} p50 ${pct(deep, 50).toFixed(1)} ms  p95 ${pct(deep, 95).toFixed(1)} ms`);

    // CSV export of the whole year, twice: the server's RSS sampled every 50 ms and noted at every
    // 100,000 rows. Flat memory = the series levels off and the second export adds nothing.
    const pid = gw.tg.child.pid!;
    for (const run of [1, 2]) {
      const before = rssKb(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb(pid))), 50);
      const series: number[] = [];
      t = performance.now();
      const res = await fetch(`${gw.url}/portal/api/exports/orders.csv?from=${day(400)}&to=${day(-1)}`, { headers: { cookie } });
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        for (const b of chunk) {
          if (b === 10 && ++lines % 100_000 === 0) series.push(Math.round(rssKb(pid) / 1024));
        }
      }
      clearInterval(sampler);
      const secs = (performance.now() - t) / 1000;
      console.log(
        `CSV export ${run}: ${lines - 1} rows, ${(bytes / 1e6).toFixed(0)} MB in ${secs.toFixed(1)} s (${((lines - 1) / secs).toFixed(0)} rows/s); server RSS ${(before / 1024).toFixed(0)} MB before, peak ${(peak / 1024).toFixed(0)} MB (+${((peak - before) / 1024).toFixed(0)} MB); RSS (MB) every 100k rows: ${series.join(' ')}`,
      );
    }
    await c.end();
  } finally {
    await gw.tg.stop().catch(() => {});
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
