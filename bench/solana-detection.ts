/**
 * Solana detection latency: from "the transaction is confirmed" (the local SVM's slot advanced past
 * it) to "the order status changed" (PAYMENT_CONFIRMED), with 0 and with 100,000 other open
 * SOL_DIRECT orders of the same merchant wallet and mint. With 0 the watcher follows the order's
 * reference key; with 100,000 it follows the merchant's token account (one address) and decodes the
 * reference from the transaction. Tollgate and the local SVM run in-process, watcher poll 50 ms.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/solana-detection.ts
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm } from '@tollgate/svm';
import { startTollgate } from '../apps/server/src/main.ts';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { solanaChainFromFile } from '../apps/server/src/config/solana.ts';
import { referenceOf } from '../apps/server/src/chain/solana/reference.ts';
import { buildConfig } from '../apps/server/test/helpers/server.ts';
import { median } from './lib/load.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const LIVE = [0, Number(process.env.BENCH_LIVE_ORDERS ?? 100_000)];
const CHAIN_ID = 792703800;

async function main() {
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_DB });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(BASE_DB);
  u.pathname = `/${name}`;
  // Slots move only when the bench says so: "confirmed" is an exact instant.
  const svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 1000, payers: 1 });
  const db = await openPostgres(u.toString());
  try {
    await migrate(db);
    const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
    const chain = solanaChainFromFile({ kind: 'solana', chain_id: CHAIN_ID, rpc_url: svm.rpcUrl, genesis_hash: svm.genesisHash, poll_interval_ms: 50, tokens: [{ symbol: 'USDC', mint: usdc.mint, decimals: 6, program: 'spl-token' }] }, 0);
    const tg = await startTollgate(buildConfig({ solanaChains: [chain] }), { db, http: { logger: false } });
    const merchants = tg.deps.merchants;
    const created = await merchants.createMerchant({ name: 'Bench', merchantId: 'bench' });
    if (created.kind !== 'created') throw new Error('merchant');
    const wallet = svm.authority.address;
    await merchants.addWallet('bench', { chainId: CHAIN_ID, tokenSymbol: 'USDC', address: wallet });
    await merchants.topUp('bench', 10n ** 15n);
    const payer = svm.payers[0]!;
    const rpc = rpcClient(svm.rpcUrl);
    const rows: string[] = [];
    let k = 0;
    for (const live of LIVE) {
      if (live > 0) {
        const t0 = Date.now();
        // In chunks: one 100,000-row statement can outlast the adapter's query timeout on a busy machine.
        for (let from = 1; from <= live; from += 10_000) {
          await db.query(
            `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
               from_address, pay_to_address, amount_wei, fee_amount, status, expires_at)
             SELECT 'ord_bench' || g, 'bench', 'bench-live-' || g, 'SOL_DIRECT', $1, $1, 'USDC', $2, 6,
               $3, $4, 1000000 + g, 0, 'CHECKOUT_VERIFIED', now() + interval '1 day'
             FROM generate_series($5::int, $6::int) g`,
            [CHAIN_ID, usdc.mint, payer.address, wallet, from, Math.min(live, from + 9_999)],
          );
        }
        await db.query('ANALYZE orders');
        console.error(`inserted ${live} open orders in ${Date.now() - t0} ms`);
      }
      const lat: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const amount = 5_000_000n + BigInt(++k);
        const out = await tg.deps.orders.createOrder({ merchantId: 'bench', receiveType: 'DIRECT', dappOrderId: `sample-${k}`, chainId: CHAIN_ID, tokenSymbol: 'USDC', fromAddress: payer.address, amountWei: amount.toString() });
        if (out.kind !== 'created') throw new Error(JSON.stringify(out));
        await payWithReference(rpc, { payer, recipient: wallet as Address, mint: usdc.mint, tokenProgram: usdc.program, decimals: 6, amount, references: [referenceOf(out.order.id) as Address], createRecipientAccount: true });
        svm.ledger.advance(1); // confirmed from here on
        const confirmed = performance.now();
        for (;;) {
          const { rows: r } = await db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [out.order.id]);
          if (r[0]!.status !== 'CHECKOUT_VERIFIED') break;
          await new Promise((res) => setTimeout(res, 2));
        }
        lat.push(performance.now() - confirmed);
      }
      lat.sort((a, b) => a - b);
      rows.push(`| ${live.toLocaleString('en')} | ${live > 64 ? 'token account' : 'reference key'} | ${SAMPLES} | ${median(lat).toFixed(0)} | ${lat[Math.floor(lat.length * 0.9)]!.toFixed(0)} | ${lat[lat.length - 1]!.toFixed(0)} |`);
    }
    await tg.close();
    console.log(`\nwatcher poll interval 50 ms, confirm at 'confirmed', Postgres\n`);
    console.log('| other open orders | followed address | samples | median ms | p90 ms | max ms |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    await db.close();
    await svm.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
