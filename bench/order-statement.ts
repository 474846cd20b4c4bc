/**
 * Postgres CPU of the order-creation statement (orders/repo.ts `insertOrdersReservingFee`) per
 * order, by batch size, on one connection with nothing else running: the backend's own CPU time
 * from /proc, divided by the orders created. Fitting `fixed / n + per_order` to two batch sizes
 * gives what one statement costs whatever its size (executor start, commit) and what each order
 * adds. Optional variants (`VARIANTS='[["name","SQL run after migrations"]]'`) run interleaved with
 * the shipped schema, each on its own scratch database.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/order-statement.ts
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Queryable } from '../apps/server/src/db/database.ts';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { insertOrdersReservingFee, type OrderToCreate } from '../apps/server/src/orders/repo.ts';
import { scratchDb } from './lib/db.ts';
import { median } from './lib/load.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SIZES = (process.env.BENCH_BATCH_SIZES ?? '1,16,32').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const VARIANTS: [string, string][] = [['shipped schema', ''], ...(JSON.parse(process.env.VARIANTS ?? '[]') as [string, string][])];

/** A migrated scratch database with one merchant, and a plain client on it (one backend, its pid). */
async function setup(sql: string) {
  const scratch = await scratchDb(BASE_DB);
  const db = await openPostgres(scratch.url, { max: 1 });
  await migrate(db);
  if (sql) await db.exec(sql);
  await db.exec(`INSERT INTO merchants (id, name) VALUES ('m1', 'Bench');
    INSERT INTO api_keys (api_key, merchant_id, secret_ciphertext) VALUES ('k1', 'm1', 'unused');
    INSERT INTO merchant_wallets (merchant_id, chain_id, token_symbol, address) VALUES ('m1', 31337, 'USDC', '0x${'11'.repeat(20)}');
    INSERT INTO fee_accounts (merchant_id, available) VALUES ('m1', 1000000000000)`);
  await db.close();
  // A client of its own: a pool would close an idle connection between rounds, losing its CPU time.
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const q: Queryable = {
    async query<R>(text: string, values?: readonly unknown[], o?: { name?: string }) {
      const r = await client.query({ text, values: values as unknown[], ...(o?.name ? { name: o.name } : {}) });
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
    exec: async (text: string) => void (await client.query(text)),
  };
  const pid = (await client.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p;
  return { q, pid, close: async () => (await client.end(), await scratch.drop()) };
}

function backendCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

let seq = 0;
const order = (): OrderToCreate => {
  const k = ++seq;
  return {
    id: `ord_${randomBytes(10).toString('hex')}`,
    merchantId: 'm1',
    dappOrderId: `bench-${k}`,
    flow: 'ERC20_DIRECT',
    chainId: 31337,
    payToChainId: 31337,
    tokenSymbol: 'USDC',
    tokenContract: `0x${'aa'.repeat(20)}`,
    decimals: 6,
    fromAddress: `0x${'22'.repeat(20)}`,
    amountWei: BigInt(1_000_000 + k),
    feeAmount: 10n,
    expiresAt: new Date(Date.now() + 3_600_000),
    nonce: { apiKey: 'k1', nonce: randomBytes(12).toString('hex') },
  };
};

async function main() {
  const sides = [];
  for (const [name, sql] of VARIANTS) sides.push({ name, ...(await setup(sql)), us: new Map<number, number[]>() });
  try {
    for (const s of sides) for (let i = 0; i < 30; i++) await insertOrdersReservingFee(s.q, Array.from({ length: 16 }, order));
    for (let r = 0; r < ROUNDS; r++) {
      for (const n of SIZES) {
        for (const s of sides) {
          const c0 = backendCpuMs(s.pid);
          const t0 = Date.now();
          let created = 0;
          while (Date.now() - t0 < SECONDS * 1000) {
            const out = await insertOrdersReservingFee(s.q, Array.from({ length: n }, order));
            if (!out.every((o) => 'order' in o)) throw new Error(`an order was not created: ${JSON.stringify(out.find((o) => !('order' in o)))}`);
            created += n;
          }
          const list = s.us.get(n) ?? [];
          list.push(((backendCpuMs(s.pid) - c0) * 1000) / created);
          s.us.set(n, list);
        }
      }
    }
    console.log(`\nPostgres backend CPU µs per created order (median of ${ROUNDS} rounds × ${SECONDS} s)\n`);
    console.log(`| schema | ${SIZES.map((n) => `batch ${n}`).join(' | ')} | fixed per statement | per order |`);
    console.log(`|---|${SIZES.map(() => '---|').join('')}---|---|`);
    for (const s of sides) {
      const at = (n: number) => median(s.us.get(n)!);
      const [a, b] = [SIZES[0]!, SIZES[SIZES.length - 1]!];
      // Two points of us(n) = fixed / n + perOrder.
      const fixed = a === b ? NaN : (at(a) - at(b)) / (1 / a - 1 / b);
      const perOrder = at(b) - fixed / b;
      console.log(`| ${s.name} | ${SIZES.map((n) => at(n).toFixed(0)).join(' | ')} | ${fixed.toFixed(0)} | ${perOrder.toFixed(0)} |`);
    }
  } finally {
    for (const s of sides) await s.close();
  }
}

await main();
