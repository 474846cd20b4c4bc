// Shared fixtures of the chain watcher integration tests (watcher*.test.ts): a devchain per test
// with its own chain id (so one database per backend serves a whole file: PGlite takes ~4 s to
// open and migrate here), a merchant with a wallet and fee balance, orders inserted through the
// orders repo with their fee reserved, payments through @tollgate/devchain.
import { randomBytes } from 'node:crypto';
import { mine, rpcRequest, startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import type { ChainConfig } from '../../src/config/schema.ts';
import type { Queryable } from '../../src/db/database.ts';
import { createChainWatcher, type ChainWatcher, type ChainWatcherOptions, type TickResult } from '../../src/chain/evm/watcher.ts';
import { createChainLogger } from '../../src/chain/evm/context.ts';
import { openFeeAccount, reserveFee, topUpFees } from '../../src/fees/ledger.ts';
import { insertOrder, type OrderRow } from '../../src/orders/repo.ts';
import type { Database } from '../../src/db/database.ts';
import { waitFor } from '../helpers/wait.ts';

export const FEE = 10_000n;

let nextChainId = 50_000 + Math.floor(Math.random() * 1000) * 10;

/**
 * A fresh anvil with TestUSDC/USDT and funded payers, on a chain id unique in this process.
 *
 * On a loaded machine (load average ~8 on 2 cores while other suites ran) startDevChain has been
 * seen to hang in its own setup, waiting 180 s (viem's receipt timeout) for a deploy/mint receipt
 * that never came; it normally takes ~0.2 s. One retry after 20 s keeps this file's runtime bounded;
 * the stuck anvil child is killed when the test process exits.
 */
export async function startTestChain(): Promise<DevChain> {
  for (let attempt = 1; ; attempt++) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 20_000)));
    const started = startDevChain({ chainId: nextChainId++ });
    const dev = await Promise.race([started, timeout]).finally(() => clearTimeout(timer));
    if (dev) return dev;
    started.then((d) => d.stop()).catch(() => {});
    if (attempt >= 2) throw new Error('startDevChain did not finish in 20 s, twice');
  }
}

/** The watcher's view of a devchain: confirmations 2, finality 4 unless overridden. */
export function chainConfigOf(dev: DevChain, overrides: Partial<ChainConfig> = {}): ChainConfig {
  return {
    chainId: dev.chainId,
    name: 'Test',
    rpcUrl: dev.rpcUrl,
    confirmations: 2,
    finalityConfirmations: 4,
    pollIntervalMs: 50,
    tokens: dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase() as Hex, decimals: t.decimals })),
    ...overrides,
  };
}

/** Logs to nowhere unless WATCHER_TEST_LOG=1 (debugging a test). */
const testLog = createChainLogger(process.env.WATCHER_TEST_LOG === '1' ? 'debug' : 'silent');

export function watcherFor(db: Database, chain: ChainConfig, opts: Partial<ChainWatcherOptions> = {}): ChainWatcher {
  return createChainWatcher({ chain, db, log: testLog, rpcOptions: { retry: { attempts: 2, baseMs: 5, maxMs: 20 }, timeoutMs: 10_000 }, ...opts });
}

export const randomAddress = (): Hex => `0x${randomBytes(20).toString('hex')}`;
const rid = (p: string) => `${p}_${randomBytes(8).toString('hex')}`;

export interface TestMerchant {
  id: string;
  wallet: Hex;
}

/** A merchant with a wallet for every token of `chain` and `topUp` of fee balance. */
export async function createMerchant(db: Database, chain: ChainConfig, topUp = 1_000_000n): Promise<TestMerchant> {
  const id = rid('m');
  const wallet = randomAddress();
  await db.transaction(async (tx) => {
    await tx.query(`INSERT INTO merchants (id, name) VALUES ($1, 'Watcher Test')`, [id]);
    for (const t of chain.tokens) {
      await tx.query('INSERT INTO merchant_wallets (merchant_id, chain_id, token_symbol, address) VALUES ($1, $2, $3, $4)', [id, chain.chainId, t.symbol, wallet]);
    }
    await openFeeAccount(tx, id);
    if (!(await topUpFees(tx, id, topUp))) throw new Error('top-up failed');
  });
  return { id, wallet };
}

/** A CHECKOUT_VERIFIED order with its fee reserved, as the orders service would create it. */
export async function createOrder(db: Database, chain: ChainConfig, m: TestMerchant, o: { from: Hex; amount: bigint; expiresAt?: Date; token?: 'USDC' | 'USDT' }): Promise<OrderRow> {
  const token = chain.tokens.find((t) => t.symbol === (o.token ?? 'USDC'))!;
  return db.transaction(async (tx) => {
    const id = rid('ord');
    const row = await insertOrder(tx, {
      id,
      merchantId: m.id,
      dappOrderId: rid('dapp'),
      flow: 'DIRECT',
      chainId: chain.chainId,
      payToChainId: chain.chainId,
      tokenSymbol: token.symbol,
      tokenContract: token.address,
      decimals: token.decimals,
      fromAddress: o.from.toLowerCase() as Hex,
      payToAddress: m.wallet,
      amountWei: o.amount,
      feeAmount: FEE,
      expiresAt: o.expiresAt ?? new Date(Date.now() + 600_000),
    });
    if (!(await reserveFee(tx, m.id, id, FEE))) throw new Error('reserve failed');
    return row;
  });
}

/**
 * Sends `amount` of USDC (or USDT) from devchain payer `payer` to `to` and waits until it is mined.
 * The wait matters: under automine anvil returns the hash before its miner task has sealed the
 * block, so on a loaded machine a tick right after `transferToken` can read the previous head.
 */
export async function pay(dev: DevChain, payer: number, to: Hex, amount: bigint, token: 'USDC' | 'USDT' = 'USDC'): Promise<Hex> {
  const hash = await transferToken({
    rpcUrl: dev.rpcUrl,
    chainId: dev.chainId,
    privateKey: dev.payers[payer]!.privateKey,
    token: dev.tokens.find((t) => t.symbol === token)!.address,
    to,
    amount,
  });
  const deadline = Date.now() + 15_000;
  while (!(await rpcRequest<unknown>(dev.rpcUrl, 'eth_getTransactionReceipt', [hash]))) {
    if (Date.now() > deadline) throw new Error(`payment ${hash} not mined in 15 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return hash;
}

export const payerAddress = (dev: DevChain, payer: number): Hex => dev.payers[payer]!.address.toLowerCase() as Hex;

export async function getOrderRow(q: Queryable, id: string): Promise<OrderRow> {
  const { rows } = await q.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [id]);
  return rows[0]!;
}

export interface TransferRow {
  id: number;
  tx_hash: string;
  block_number: number;
  block_hash: string;
  block_timestamp: Date | null;
  amount_wei: string;
  match_status: string;
  order_id: string | null;
  orphaned_at: Date | null;
  from_address: string;
  to_address: string;
}

export async function transfersOf(q: Queryable, chainId: number): Promise<TransferRow[]> {
  const { rows } = await q.query<TransferRow>('SELECT * FROM chain_transfers WHERE chain_id = $1 ORDER BY id', [chainId]);
  return rows;
}

export async function transitionsOf(q: Queryable, orderId: string): Promise<{ from_status: string | null; to_status: string; trigger: string }[]> {
  const { rows } = await q.query<{ from_status: string | null; to_status: string; trigger: string }>('SELECT from_status, to_status, trigger FROM order_transitions WHERE order_id = $1 ORDER BY id', [orderId]);
  return rows;
}

export async function headNumber(dev: DevChain): Promise<bigint> {
  return BigInt(await rpcRequest<string>(dev.rpcUrl, 'eth_blockNumber', []));
}

/** One tick that must lead and succeed; fails the test with the tick's error otherwise. */
export async function tickOk(w: ChainWatcher): Promise<Extract<TickResult, { kind: 'leader' }>> {
  const r = await w.tick();
  if (r.kind !== 'leader') throw new Error(`tick: expected leader, got ${r.kind}${r.kind === 'error' ? `: ${r.error}` : ''}`);
  return r;
}

/** Ticks until the watcher reports it is caught up (at most `max` ticks); returns the results. */
export async function tickUntilCaughtUp(w: ChainWatcher, max = 50) {
  const results = [];
  for (let i = 0; i < max; i++) {
    const r = await w.tick();
    results.push(r);
    if (r.kind === 'leader' && r.caughtUp) return results;
  }
  throw new Error(`watcher did not catch up in ${max} ticks: ${JSON.stringify(results.at(-1), (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
}

/** The running watcher's cursor (the last block it scanned) on `chainId`; -1 before its first tick. */
async function cursorAt(db: Queryable, chainId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT block_number AS n FROM chain_cursors WHERE chain_id = $1', [chainId]);
  return rows[0]?.n ?? -1;
}

/** Waits until the running watcher has scanned `block` (a range's payments are recorded before its cursor moves). */
export function scannedTo(db: Queryable, chainId: number, block: number): Promise<number> {
  return waitFor(
    `the watcher's cursor at block ${block}`,
    () => cursorAt(db, chainId),
    (n) => n >= block,
  );
}

/** The block a mined transaction is in. */
export async function blockOf(rpcUrl: string, hash: Hex): Promise<number> {
  return Number(BigInt((await rpcRequest<{ blockNumber: string }>(rpcUrl, 'eth_getTransactionReceipt', [hash])).blockNumber));
}

/**
 * Waits for a whole tick of the running watcher at the present head or later, depth pass included
 * (mines one block): a tick scans, then runs its depth pass, so once the next tick has scanned one
 * more block the first is done. What a test then finds unchanged, the watcher looked at: the wait
 * for "nothing happened" that a fixed sleep only hoped for.
 */
export async function tickedAtHead(db: Queryable, dev: { rpcUrl: string; chainId: number }): Promise<void> {
  const head = Number(BigInt(await rpcRequest<string>(dev.rpcUrl, 'eth_blockNumber', [])));
  await scannedTo(db, dev.chainId, head);
  await mine(dev.rpcUrl, 1);
  await scannedTo(db, dev.chainId, head + 1);
}
