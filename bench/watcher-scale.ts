/**
 * The EVM watcher at real-chain scale (issue 25 item 4): a busy token (BENCH_NOISE, default 2,000
 * unrelated USDC transfers per block, between other accounts) while Tollgate watches BENCH_WALLETS
 * (default 10,000) merchant wallets, against a quiet chain (the same wallets, no other traffic) in
 * the same run, blocks alternating quiet / busy. Each block carries one payment of an open order to
 * one of the wallets. Tollgate runs as an operator runs it (`serve --role worker`, compiled build
 * when `npm run build` made one) on a scratch PostgreSQL database, its RPC through the counting proxy
 * of @tollgate/devchain; anvil mines a block only when this script says so.
 *
 * Per block (each block's window is BENCH_BLOCK_MS, default 2,000 ms: the watcher polls every
 * BENCH_POLL_MS, default 500, so a window holds several ticks, one of them scanning the block):
 *   - JSON-RPC calls the watcher made (all, and eth_getLogs), HTTP requests, bytes sent and received;
 *   - chain_transfers rows added (exactly the payments: nothing stored for unrelated transfers), and
 *     the tuples the database wrote (pg_stat_user_tables inserts + updates + deletes: leases, cursor,
 *     order, events; the statistics reach pg_stat up to ~1 s late, so that column is an average);
 *   - CPU ms of the gateway process and of the database's postgres processes;
 *   - detection latency: `evm_mine` returned → the order's status changed (PAYMENT_CONFIRMED at
 *     confirmations = 1).
 *
 * BENCH_BASELINE=<another checkout, built> runs that checkout's gateway instead (the watcher before a change).
 *
 *   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/watcher-scale.ts
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { rpcRequest, setAutomine, startDevChain, startRpcProxy } from '@tollgate/devchain';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { spawnTollgate } from '../apps/server/test/helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../apps/server/test/helpers/server.ts';
import { scratchDb } from './lib/db.ts';
import { detected, QuietBusy, readScale, rpcCalls as calls } from './lib/scale.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000);
const NOISE = Number(process.env.BENCH_NOISE ?? 2_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 500);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 2_000);

const walletOf = (i: number) => `0x${(0xa11ce000_0000n + BigInt(i)).toString(16).padStart(40, '0')}` as Hex;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const db = await scratchDb(BASE_DB);
  const dev = await startDevChain();
  const proxy = await startRpcProxy(dev.rpcUrl);
  const c = new pg.Client({ connectionString: db.url });
  let tg: ReturnType<typeof spawnTollgate> | undefined;
  try {
    const m = await openPostgres(db.url);
    await migrate(m);
    await m.close();
    await c.connect();
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
    const token = usdc.address.toLowerCase();
    // WALLETS merchants, one USDC wallet each (merchant_wallets holds one per merchant, chain and token).
    await c.query(`INSERT INTO merchants (id, name) SELECT 'm' || g, 'Merchant ' || g FROM generate_series(0, $1::int - 1) g`, [WALLETS]);
    await c.query(
      `INSERT INTO merchant_wallets (merchant_id, chain_id, token_symbol, address)
       SELECT 'm' || g, $1, 'USDC', '0x' || lpad(to_hex(x'a11ce0000000'::bigint + g), 40, '0') FROM generate_series(0, $2::int - 1) g`,
      [dev.chainId, WALLETS],
    );
    if (walletOf(7) !== (await c.query<{ address: string }>(`SELECT address FROM merchant_wallets WHERE merchant_id = 'm7'`)).rows[0]!.address) throw new Error('wallet addresses differ');

    // Blocks only when mined below, big enough for the noise (a transfer to a fresh address ~52k gas).
    await setAutomine(dev.rpcUrl, false);
    await rpcRequest(dev.rpcUrl, 'evm_setBlockGasLimit', [`0x${(1_000_000_000).toString(16)}`]);
    const senders = dev.payers.map((p) => p.address);
    const nonces = new Map<string, number>();
    for (const s of senders) nonces.set(s, Number(await rpcRequest<Hex>(dev.rpcUrl, 'eth_getTransactionCount', [s, 'pending'])));
    const tx = (from: Hex, to: Hex, amount: bigint) => {
      const nonce = nonces.get(from)!;
      nonces.set(from, nonce + 1);
      return { from, to: usdc.address, gas: '0x186a0', nonce: `0x${nonce.toString(16)}`, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }) };
    };
    /** Sends unsigned transactions (anvil's accounts are unlocked) in JSON-RPC batches; they wait in the pool for the next mine. */
    const send = async (txs: object[]) => {
      for (let i = 0; i < txs.length; i += 500) {
        const batch = txs.slice(i, i + 500).map((t, j) => ({ jsonrpc: '2.0', id: j, method: 'eth_sendTransaction', params: [t] }));
        const res = (await (await fetch(dev.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })).json()) as { error?: unknown }[];
        const bad = res.find((r) => r.error);
        if (bad) throw new Error(`eth_sendTransaction: ${JSON.stringify(bad.error)}`);
      }
    };
    const noise = () => Array.from({ length: NOISE }, (_, i) => tx(senders[(i % (senders.length - 1)) + 1]!, `0x${randomBytes(20).toString('hex')}` as Hex, 1n));

    const cfg = join(mkdtempSync(join(tmpdir(), 'tg-bench-scale-')), 'tollgate.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        environment: 'test',
        chains: [{ chain_id: dev.chainId, rpc_url: proxy.url, confirmations: 1, finality_confirmations: 3, poll_interval_ms: POLL_MS, tokens: [{ symbol: 'USDC', address: token, decimals: 6 }] }],
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
    const head = async () => Number(await rpcRequest<Hex>(dev.rpcUrl, 'eth_blockNumber', []));
    const cursorAt = async () => Number((await c.query<{ b: string }>('SELECT block_number::text AS b FROM chain_cursors WHERE chain_id = $1', [dev.chainId])).rows[0]?.b ?? -1);
    await rpcRequest(dev.rpcUrl, 'evm_mine', []);
    while ((await cursorAt()) < (await head())) await sleep(20);

    const read = () => readScale(c, () => proxy.stats(), pid, db.name);
    const payer = senders[0]!;
    const table = new QuietBusy();
    const push = table.push.bind(table);
    let seq = 0;
    for (let i = 0; i < 2 * SAMPLES + 2; i++) {
      // The first two blocks warm up (connections, plans); then quiet and busy alternate.
      const kind = i % 2 === 0 ? 'quiet' : 'busy';
      const w = (i * 7919) % WALLETS;
      const amount = 5_000_000n + BigInt(++seq);
      const orderId = `ord_scale_${seq}`;
      await c.query(
        `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
           from_address, pay_to_address, amount_wei, fee_amount, status, expires_at)
         VALUES ($1, $2, $1, 'ERC20_DIRECT', $3, $3, 'USDC', $4, 6, $5, $6, $7, 0, 'CHECKOUT_VERIFIED', now() + interval '1 day')`,
        [orderId, `m${w}`, dev.chainId, token, payer.toLowerCase(), walletOf(w), amount.toString()],
      );
      if (kind === 'busy') await send(noise());
      await send([tx(payer, walletOf(w), amount)]);
      const before = await read();
      const t0 = performance.now();
      await rpcRequest(dev.rpcUrl, 'evm_mine', []);
      const mined = performance.now();
      const latency = await detected(c, orderId, mined, 60_000);
      const rest = BLOCK_MS - (performance.now() - t0);
      if (rest > 0) await sleep(rest);
      const after = await read();
      // Each transaction of the block is one USDC transfer (one Transfer log).
      const logs = Number(await rpcRequest<Hex>(dev.rpcUrl, 'eth_getBlockTransactionCountByNumber', ['latest']));
      if (i < 2) continue;
      push(kind, 'transfer logs in the block', logs);
      push(kind, 'detection latency ms', latency);
      push(kind, 'JSON-RPC calls', calls(after.rpc) - calls(before.rpc));
      push(kind, 'eth_getLogs calls', calls(after.rpc, 'eth_getLogs') - calls(before.rpc, 'eth_getLogs'));
      push(kind, 'HTTP requests', after.rpc.requests - before.rpc.requests);
      table.pushCosts(kind, before, after);
      console.error(`block ${i - 1} ${kind}: ${logs} logs, detected in ${latency.toFixed(0)} ms, ${calls(after.rpc) - calls(before.rpc)} calls, ${after.transfers - before.transfers} rows`);
    }
    table.print({
      caption: `${WALLETS.toLocaleString('en')} watched wallets, ${NOISE.toLocaleString('en')} unrelated transfers per busy block, poll ${POLL_MS} ms, one block per ${BLOCK_MS} ms, ${SAMPLES} blocks each, ${compiled ? 'compiled build' : 'source (tsx)'} of ${root}`,
      unit: 'block',
      busyLabel: 'busy token',
      pollMs: POLL_MS,
    });
  } finally {
    await tg?.stop();
    await c.end().catch(() => {});
    await proxy.close();
    await dev.stop();
    await db.drop();
  }
}

await main();
