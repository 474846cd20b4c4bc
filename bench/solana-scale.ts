/**
 * The Solana follower at real-chain scale (issue 25 item 4), twin of bench/watcher-scale.ts: the
 * local SVM (packages/svm) with BENCH_WALLETS (default 10,000) merchant wallets, so Tollgate follows
 * that many token accounts (more than 64 open orders: token-account mode), and a busy mint
 * (BENCH_NOISE, default 2,000 unrelated USDC transfers per slot between other accounts) against a
 * quiet chain in the same run, slots alternating quiet / busy. Each measured slot carries one
 * payment (Solana Pay reference) of an open order to one of the wallets. Tollgate runs as
 * `serve --role worker` (compiled build when there is one) on a scratch PostgreSQL database, its
 * RPC through the counting proxy of @tollgate/devchain; slots move only when this script says so.
 *
 * Per slot (window BENCH_BLOCK_MS, default 2,000 ms, or until the payment is detected when that
 * takes longer; watcher poll BENCH_POLL_MS, default 500): JSON-RPC calls (all, and
 * getSignaturesForAddress), bytes, chain_transfers rows added, tuples written, CPU of the gateway and
 * of the database, and detection latency: the slot advanced past the payment (it is `confirmed`) →
 * the order's status changed.
 *
 * BENCH_BASELINE=<another checkout, built> runs that checkout's gateway instead (the watcher before a change).
 *
 *   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/solana-scale.ts
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { getBase58Decoder, type Address } from '@solana/kit';
import { newId } from '@tollgate/protocol';
import { startRpcProxy } from '@tollgate/devchain';
import { payWithReference, rpcClient, startLocalSvm } from '@tollgate/svm';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { referenceOf } from '../apps/server/src/chain/solana/reference.ts';
import { spawnTollgate } from '../apps/server/test/helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../apps/server/test/helpers/server.ts';
import { scratchDb } from './lib/db.ts';
import { detected, QuietBusy, readScale, rpcCalls as calls } from './lib/scale.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000);
const NOISE = Number(process.env.BENCH_NOISE ?? 2_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 500);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 2_000);
const CHAIN_ID = 792703800;
const OPEN_ORDERS = 100; // beyond the watcher's 64: it follows token accounts, not reference keys

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b58 = getBase58Decoder();
/** A deterministic wallet address (32 bytes, base58) per index. */
const walletOf = (i: number) => b58.decode(Buffer.concat([Buffer.from('tollgate-bench-wallet-'), Buffer.from(i.toString(16).padStart(10, '0'))]).subarray(0, 32));

async function main() {
  const db = await scratchDb(BASE_DB);
  const svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 1000, payers: 9 });
  const proxy = await startRpcProxy(svm.rpcUrl);
  const c = new pg.Client({ connectionString: db.url });
  let tg: ReturnType<typeof spawnTollgate> | undefined;
  try {
    const m = await openPostgres(db.url);
    await migrate(m);
    await m.close();
    await c.connect();
    const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
    const wallets = Array.from({ length: WALLETS }, (_, i) => walletOf(i));
    if (new Set(wallets).size !== WALLETS || wallets.some((w) => w.length < 32)) throw new Error('wallet addresses');
    await c.query(`INSERT INTO merchants (id, name) SELECT 'm' || g, 'Merchant ' || g FROM generate_series(0, $1::int - 1) g`, [WALLETS]);
    await c.query(`INSERT INTO merchant_wallets (merchant_id, chain_id, token_symbol, address) SELECT 'm' || (g - 1), $1, 'USDC', a FROM unnest($2::text[]) WITH ORDINALITY AS t(a, g)`, [CHAIN_ID, wallets]);
    const payer = svm.payers[0]!;
    const insertOrder = (id: string, wallet: number, amount: bigint) =>
      c.query(
        `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
           from_address, pay_to_address, amount_wei, fee_amount, status, expires_at)
         VALUES ($1, $2, $1, 'SOL_DIRECT', $3, $3, 'USDC', $4, 6, $5, $6, $7, 0, 'CHECKOUT_VERIFIED', now() + interval '1 day')`,
        [id, `m${wallet}`, CHAIN_ID, usdc.mint, payer.address, wallets[wallet], amount.toString()],
      );
    for (let k = 0; k < OPEN_ORDERS; k++) await insertOrder(`ord_open_${k}`, k % WALLETS, 1_000_000n + BigInt(k));

    const cfg = join(mkdtempSync(join(tmpdir(), 'tg-bench-sol-scale-')), 'tollgate.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        environment: 'test',
        chains: [{ kind: 'solana', chain_id: CHAIN_ID, rpc_url: proxy.url, genesis_hash: svm.genesisHash, poll_interval_ms: POLL_MS, tokens: [{ symbol: 'USDC', mint: usdc.mint, decimals: 6, program: 'spl-token' }] }],
      }),
    );
    const root = process.env.BENCH_BASELINE ?? ROOT;
    const compiled = existsSync(join(root, 'apps/server/dist/tollgate.js'));
    tg = spawnTollgate(
      ['serve', '--role', 'worker'],
      {
        DATABASE_URL: db.url,
        TOLLGATE_CONFIG: cfg,
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
        ...(compiled ? { NODE_ENV: 'production' } : {}),
      },
      undefined,
      [],
      join(root, 'apps/server/bin/tollgate.js'),
    );
    await tg.waitFor(/listening on/, 120_000);
    const pid = tg.child.pid!;
    const rpc = rpcClient(svm.rpcUrl);
    // Unrelated traffic: payers 1..8 pay each other (their token accounts exist), amounts all different.
    let noiseSeq = 0;
    const noise = async () => {
      const others = svm.payers.slice(1);
      const one = (i: number) => {
        const from = others[i % others.length]!;
        const to = others[(i + 1) % others.length]!;
        return payWithReference(rpc, { payer: from, recipient: to.address, mint: usdc.mint, tokenProgram: usdc.program, decimals: 6, amount: BigInt(++noiseSeq) });
      };
      for (let i = 0; i < NOISE; i += 50) await Promise.all(Array.from({ length: Math.min(50, NOISE - i) }, (_, j) => one(i + j)));
    };

    const read = () => readScale(c, () => proxy.stats(), pid, db.name);
    const table = new QuietBusy();
    const push = table.push.bind(table);
    let seq = 0;
    for (let i = 0; i < 2 * SAMPLES + 2; i++) {
      const kind = i % 2 === 0 ? 'quiet' : 'busy';
      const w = (i * 7919) % WALLETS;
      const amount = 5_000_000n + BigInt(++seq);
      const orderId = newId('ord');
      await insertOrder(orderId, w, amount);
      if (kind === 'busy') await noise();
      await payWithReference(rpc, { payer, recipient: wallets[w] as Address, mint: usdc.mint, tokenProgram: usdc.program, decimals: 6, amount, references: [referenceOf(orderId) as Address], createRecipientAccount: true });
      const slotTxs = svm.ledger.slot;
      const before = await read();
      const t0 = performance.now();
      svm.ledger.advance(1); // the payment (and the noise) is `confirmed` from here on
      const latency = await detected(c, orderId, t0, 600_000);
      const rest = BLOCK_MS - (performance.now() - t0);
      if (rest > 0) await sleep(rest);
      const after = await read();
      if (i < 2) continue;
      const window = Math.max(BLOCK_MS, latency);
      push(kind, 'window ms (the slot, or until detected)', window);
      push(kind, 'detection latency ms', latency);
      push(kind, 'JSON-RPC calls', calls(after.rpc) - calls(before.rpc));
      push(kind, 'getSignaturesForAddress calls', calls(after.rpc, 'getSignaturesForAddress') - calls(before.rpc, 'getSignaturesForAddress'));
      table.pushCosts(kind, before, after);
      console.error(`slot ${slotTxs} ${kind}: detected in ${latency.toFixed(0)} ms, ${calls(after.rpc) - calls(before.rpc)} calls, ${after.transfers - before.transfers} rows`);
    }
    table.print({
      caption: `${WALLETS.toLocaleString('en')} watched wallets (token accounts), ${NOISE.toLocaleString('en')} unrelated transfers per busy slot, poll ${POLL_MS} ms, window ${BLOCK_MS} ms, ${SAMPLES} slots each, ${compiled ? 'compiled build' : 'source (tsx)'} of ${root}`,
      unit: 'slot',
      busyLabel: 'busy mint',
      pollMs: POLL_MS,
    });
  } finally {
    await tg?.stop();
    await c.end().catch(() => {});
    await proxy.close();
    await svm.stop();
    await db.drop();
  }
}

await main();
