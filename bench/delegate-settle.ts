/**
 * DELEGATE settlement: (1) latency from "the payment is final" (its receipt is available, with
 * finality = 1 block) to "the callback executed" (the settlement transaction's receipt is
 * available), one order at a time; (2) settlements per second for a batch of orders paid at once,
 * against anvil's raw rate for the same number of pipelined token transfers from one key, measured
 * in the same run on the same chain. Anvil mines a block every second (interval mining); Tollgate
 * runs in-process (watcher and settlement worker polling every 50 ms) on PGlite, or on Postgres with
 * BENCH_DATABASE_URL. Every order calls the example credit adapter with payer-signed calldata.
 *
 *   npx tsx bench/delegate-settle.ts                      # PGlite
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/delegate-settle.ts
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { toSignableTypedData } from '@tollgate/contracts';
import { startDevChain, publicClientFor, type DevChain } from '@tollgate/devchain';
import { encodeAbiParameters, encodeFunctionData, erc20Abi, pad, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTollgate } from '../apps/server/src/main.ts';
import type { Database } from '../apps/server/src/db/database.ts';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { buildConfig } from '../apps/server/test/helpers/server.ts';
import { openTestDatabase } from '../apps/server/test/helpers/db.ts';
import { withSettlement } from '../apps/server/test/helpers/settlement.ts';
import { median } from './lib/load.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 15);
const BATCH = Number(process.env.BENCH_BATCH ?? 40);
const PG = process.env.BENCH_DATABASE_URL;
const CALLDATA = encodeAbiParameters([{ type: 'bytes32' }], [pad('0xbeef', { size: 32 })]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function openDb(): Promise<{ db: Database; close(): Promise<void> }> {
  if (!PG) {
    const t = await openTestDatabase('pglite');
    return { db: t.db, close: () => t.drop() };
  }
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(PG);
  u.pathname = `/${name}`;
  const db = await openPostgres(u.toString());
  await migrate(db);
  return {
    db,
    async close() {
      await db.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * Sends `txs` back to back with consecutive nonces and waits for every receipt, leaving the
 * mining to anvil's 1 s interval (devchain's sendPipelined mines a block itself, which would make
 * the raw rate a measure of evm_mine instead of the chain's block time).
 */
async function sendPipelined(client: ReturnType<typeof publicClientFor>, account: PrivateKeyAccount, txs: { to: Hex; data: Hex; gas: bigint; label: string }[]) {
  const [nonce, fees] = await Promise.all([client.getTransactionCount({ address: account.address, blockTag: 'pending' }), client.estimateFeesPerGas()]);
  const hashes: Hex[] = [];
  for (const [i, tx] of txs.entries()) {
    const serializedTransaction = await account.signTransaction({ type: 'eip1559', chainId: client.chain.id, nonce: nonce + i, gas: tx.gas, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, to: tx.to, data: tx.data });
    hashes.push(await client.sendRawTransaction({ serializedTransaction }));
  }
  const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash, pollingInterval: 20 })));
  receipts.forEach((r, i) => {
    if (r.status !== 'success') throw new Error(`${txs[i]!.label} reverted`);
  });
  return receipts;
}

async function main() {
  const dev: DevChain = await startDevChain({ blockTime: 1 });
  const { db, close } = await openDb();
  try {
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
    const setup = await withSettlement(dev, {
      chainId: dev.chainId,
      name: 'bench',
      rpcUrl: dev.rpcUrl,
      confirmations: 1,
      finalityConfirmations: 1,
      pollIntervalMs: 50,
      tokens: [{ symbol: 'USDC', address: usdc.address.toLowerCase() as Hex, decimals: 6, eip3009: true }],
    });
    const config = buildConfig({ chains: [setup.chain], settlement: setup.signer });
    const tg = await startTollgate(config, { db, http: { logger: false } });
    const { merchants, delegate, orders } = tg.deps;
    if ((await merchants.createMerchant({ name: 'Bench', merchantId: 'bench', receiveType: 'DELEGATE' })).kind !== 'created') throw new Error('merchant');
    await merchants.addWallet('bench', { chainId: dev.chainId, tokenSymbol: 'USDC', address: '0x' + 'ab'.repeat(20) });
    await merchants.topUp('bench', 10n ** 15n);
    const a = setup.adapter!;
    const reg = await delegate.registerCallback('bench', { chainId: dev.chainId, callbackContract: a.address, eip712Name: a.eip712Name, eip712Version: a.eip712Version });
    if (reg.kind !== 'registered') throw new Error(reg.kind);
    const client = publicClientFor(dev.rpcUrl, dev.chainId);
    const payer = privateKeyToAccount(dev.payers[0]!.privateKey);
    const settlement = setup.chain.settlementContract!;
    let k = 0;

    /** A signed DELEGATE order with a callback; returns its id and amount. */
    async function signedOrder(): Promise<{ id: string; amount: bigint }> {
      const amount = 1_000_000n + BigInt(++k);
      const out = await orders.createOrder({ merchantId: 'bench', receiveType: 'DELEGATE', dappOrderId: `b-${k}`, chainId: dev.chainId, tokenSymbol: 'USDC', fromAddress: payer.address, amountWei: amount.toString(), callbackCalldata: CALLDATA });
      if (out.kind !== 'created') throw new Error(JSON.stringify(out));
      const req = out.calldataSignRequest!;
      const sig = await payer.signTypedData(toSignableTypedData(req));
      const s = await delegate.submitSignature('bench', out.order.id, sig);
      if (s.kind !== 'accepted') throw new Error(s.kind);
      return { id: out.order.id, amount };
    }
    const transferTx = (amount: bigint, label: string) => ({
      to: usdc.address,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [settlement, amount] }),
      gas: 80_000n,
      label,
    });
    async function settlementHashes(ids: string[]): Promise<Map<string, Hex>> {
      const { rows } = await db.query<{ id: string; settlement_tx_hash: Hex | null }>('SELECT id, settlement_tx_hash FROM orders WHERE id = ANY($1::text[])', [ids]);
      return new Map(rows.filter((r) => r.settlement_tx_hash).map((r) => [r.id, r.settlement_tx_hash!]));
    }
    async function mined(hash: Hex): Promise<boolean> {
      return client.getTransactionReceipt({ hash }).then(
        (r: { status: string }) => r.status === 'success',
        () => false,
      );
    }

    // (1) latency, one order at a time
    const lat: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const o = await signedOrder();
      const [receipt] = await sendPipelined(client, payer, [transferTx(o.amount, 'pay')]);
      if (!receipt) throw new Error('no receipt');
      const final = performance.now(); // finality 1: the payment is final once mined
      let hash: Hex | undefined;
      for (;;) {
        hash ??= (await settlementHashes([o.id])).get(o.id);
        if (hash && (await mined(hash))) break;
        await sleep(10);
      }
      lat.push(performance.now() - final);
    }
    lat.sort((x, y) => x - y);

    // (2) throughput: BATCH orders paid in one pipelined burst, until every settlement is mined
    const batch = [];
    for (let i = 0; i < BATCH; i++) batch.push(await signedOrder());
    const payReceipts = await sendPipelined(
      client,
      payer,
      batch.map((o, i) => transferTx(o.amount, `pay ${i}`)),
    );
    const paidAt = performance.now();
    const paidWall = Date.now();
    const done = new Set<string>();
    const recordedAt = new Map<string, number>();
    while (done.size < batch.length) {
      const hashes = await settlementHashes(batch.map((o) => o.id).filter((id) => !done.has(id)));
      for (const [id, h] of hashes) {
        if (!recordedAt.has(id)) recordedAt.set(id, performance.now() - paidAt);
        if (await mined(h)) done.add(id);
      }
      await sleep(20);
    }
    const settleS = (performance.now() - paidAt) / 1000;
    // Where the time went: when the rows appeared (seen by this 20 ms poll) and in which blocks
    // the settlements were mined, relative to the last payment's block.
    const payBlock = payReceipts.reduce((mx, r) => (r.blockNumber > mx ? r.blockNumber : mx), 0n);
    const blocks = new Map<string, number>();
    for (const h of (await settlementHashes(batch.map((o) => o.id))).values()) {
      const r = await client.getTransactionReceipt({ hash: h });
      const k = `+${r.blockNumber - payBlock}`;
      blocks.set(k, (blocks.get(k) ?? 0) + 1);
    }
    const seen = [...recordedAt.values()].sort((x, y) => x - y);
    const { rows: created } = await db.query<{ first: Date; last: Date }>('SELECT min(created_at) AS first, max(created_at) AS last FROM settlements WHERE order_id = ANY($1::text[])', [batch.map((o) => o.id)]);
    const diag = `rows recorded ${new Date(created[0]!.first).getTime() - paidWall}…${new Date(created[0]!.last).getTime() - paidWall} ms after the last payment receipt (seen by the bench's poll ${seen[0]!.toFixed(0)}…${seen[seen.length - 1]!.toFixed(0)} ms); settlements mined in blocks ${[
      ...blocks,
    ]
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ')} (relative to the payments' block)`;
    await tg.close();

    // anvil's raw rate in the same run: the same number of pipelined transfers, send to last receipt
    const rawStart = performance.now();
    await sendPipelined(
      client,
      payer,
      batch.map((_o, i) => transferTx(1n, `raw ${i}`)),
    );
    const rawS = (performance.now() - rawStart) / 1000;

    const settleRate = BATCH / settleS;
    const rawRate = BATCH / rawS;
    console.log(`\nanvil block time 1 s, finality 1, watcher + settlement worker poll 50 ms, ${PG ? 'Postgres' : 'PGlite'}\n`);
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(`| payment final → callback executed, median of ${SAMPLES} | ${median(lat).toFixed(0)} ms (p90 ${lat[Math.floor(lat.length * 0.9)]!.toFixed(0)}, max ${lat[lat.length - 1]!.toFixed(0)}) |`);
    console.log(`| settlements/s, ${BATCH} orders paid at once | ${settleRate.toFixed(1)} (${settleS.toFixed(2)} s) |`);
    console.log(`| anvil raw pipelined transfers/s, ${BATCH} txs | ${rawRate.toFixed(1)} (${rawS.toFixed(2)} s) |`);
    console.log(`| ratio settlements / raw | ${(settleRate / rawRate).toFixed(2)} |`);
    console.log(`\n${diag}`);
  } finally {
    await close();
    await dev.stop();
  }
}

await main();
