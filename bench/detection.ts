/**
 * Detection latency: from "the block with the transfer is mined" (receipt available) to "the order
 * status changed" (PAYMENT_CONFIRMED at confirmations = 1), with 0 and with 100,000 other live
 * orders of the same merchant, token and pay-to address (the worst case for matching: they differ
 * only by payer). Tollgate runs in-process on PostgreSQL with its watcher polling every 50 ms.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/detection.ts
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startDevChain, transferToken } from '@tollgate/devchain';
import { createPublicClient, http, type Hex } from 'viem';
import { startTollgate } from '../apps/server/src/main.ts';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { buildConfig } from '../apps/server/test/helpers/server.ts';
import { median } from './lib/load.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const LIVE = [0, Number(process.env.BENCH_LIVE_ORDERS ?? 100_000)];

async function main() {
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_DB });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(BASE_DB);
  u.pathname = `/${name}`;
  const dev = await startDevChain();
  const db = await openPostgres(u.toString());
  try {
    await migrate(db);
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
    const token = usdc.address.toLowerCase();
    const wallet = '0x' + 'ab'.repeat(20);
    const config = buildConfig({
      chains: [{ chainId: dev.chainId, name: 'bench', rpcUrl: dev.rpcUrl, confirmations: 1, finalityConfirmations: 3, pollIntervalMs: 50, tokens: [{ symbol: 'USDC', address: token as Hex, decimals: 6 }] }],
    });
    const tg = await startTollgate(config, { db, http: { logger: false } });
    const merchants = tg.deps.merchants;
    const created = await merchants.createMerchant({ name: 'Bench', merchantId: 'bench' });
    if (created.kind !== 'created') throw new Error('merchant');
    await merchants.addWallet('bench', { chainId: dev.chainId, tokenSymbol: 'USDC', address: wallet });
    await merchants.topUp('bench', 10n ** 15n);
    const client = createPublicClient({ transport: http(dev.rpcUrl) });
    const payer = dev.payers[0]!;
    const rows: string[] = [];
    let k = 0;
    for (const live of LIVE) {
      if (live > 0) {
        const t0 = Date.now();
        await db.query(
          `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
             from_address, pay_to_address, amount_wei, fee_amount, status, expires_at)
           SELECT 'ord_bench' || g, 'bench', 'bench-live-' || g, 'ERC20_DIRECT', $1, $1, 'USDC', $2, 6,
             '0x' || lpad(to_hex(g), 40, '0'), $3, 1000000 + g, 0, 'CHECKOUT_VERIFIED', now() + interval '1 day'
           FROM generate_series(1, $4::int) g`,
          [dev.chainId, token, wallet, live],
        );
        await db.query('ANALYZE orders');
        console.error(`inserted ${live} live orders in ${Date.now() - t0} ms`);
      }
      const lat: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const amount = 5_000_000n + BigInt(++k);
        const out = await tg.deps.orders.createOrder({ merchantId: 'bench', receiveType: 'DIRECT', dappOrderId: `sample-${k}`, chainId: dev.chainId, tokenSymbol: 'USDC', fromAddress: payer.address, amountWei: amount.toString() });
        if (out.kind !== 'created') throw new Error(JSON.stringify(out));
        const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: wallet as Hex, amount });
        await client.waitForTransactionReceipt({ hash, pollingInterval: 2 });
        const mined = performance.now();
        for (;;) {
          const { rows: r } = await db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [out.order.id]);
          if (r[0]!.status !== 'CHECKOUT_VERIFIED') break;
          await new Promise((res) => setTimeout(res, 2));
        }
        lat.push(performance.now() - mined);
      }
      lat.sort((a, b) => a - b);
      rows.push(`| ${live.toLocaleString('en')} | ${SAMPLES} | ${median(lat).toFixed(0)} | ${lat[Math.floor(lat.length * 0.9)]!.toFixed(0)} | ${lat[lat.length - 1]!.toFixed(0)} |`);
    }
    await tg.close();
    console.log(`\nwatcher poll interval 50 ms, confirmations 1, Postgres\n`);
    console.log('| other live orders | samples | median ms | p90 ms | max ms |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    await db.close();
    await dev.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
