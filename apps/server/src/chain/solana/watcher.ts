/**
 * One Solana cluster's watcher. A tick:
 *  1. takes or renews the chain's lease (chain/evm/lease.ts, keyed by chain id: one leader per
 *     chain across processes); a follower does nothing else;
 *  2. checks the cluster's genesis hash once (a config pointing at another cluster is an error);
 *  3. follows the addresses of the orders awaiting payment: their reference keys while they are few
 *     (precise: only the orders' own transactions), the merchants' token accounts beyond
 *     `referenceLimit` (one address per merchant wallet and mint, however many orders are open); each
 *     address from its saved cursor (solana_cursors) with scan.ts catchUp: a backlog larger than a
 *     tick's pages is walked down across ticks and read oldest first, never skipped (an address
 *     with an unfinished walk stays followed until it is read to the end);
 *  4. decodes each new confirmed transaction, attributes its transfers by reference (attribution.ts)
 *     and records each once (chain_transfers unique key: signature + instruction index); a match
 *     moves the order to PAYMENT_CONFIRMED (to INVOICED directly when the confirm level is
 *     `finalized`), through orders/transition.ts; a transfer mined after the order's expires_at is
 *     recorded `late` (attribution.ts recordedKind);
 *  5. asks getSignatureStatuses about the attributed payments not yet finalized and invoices the
 *     finalized ones;
 *  6. records the scan position (chain_cursors) so the expiry sweeper expires an order only once
 *     every payment confirmed before its expiry has been looked at: only after a tick that caught
 *     up with every followed address (not while a backlog is being read).
 * A transaction that never lands (dropped) never appears in step 3: its order simply stays open.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Address, Signature } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { systemClock, type Clock } from '../../clock.ts';
import type { SolanaChainConfig } from '../../config/schema.ts';
import type { Database, Queryable } from '../../db/database.ts';
import { claimForOrder, claimHolder } from '../../orders/claims.ts';
import * as orders from '../../orders/repo.ts';
import { transitionOrder } from '../../orders/transition.ts';
import type { Worker } from '../../workers.ts';
import { createChainLogger, type ChainLogger } from '../evm/context.ts';
import { acquireLease, releaseLease } from '../evm/lease.ts';
import { emitRecordedPayment } from '../evm/matching.ts';
import { describeError } from '../evm/rpc.ts';
import { tickBackoff } from '../evm/watcher.ts';
import { attribute, recordedKind } from './attribution.ts';
import type { SolanaTransfer } from './decode.ts';
import { AccountProbe } from './probe.ts';
import { orderIdOfReference, referenceOf } from './reference.ts';
import * as repo from './repo.ts';
import { createSolanaRpcClient, type SolanaRpc } from './rpc.ts';
import { catchUp, fetchTransfers } from './scan.ts';

export interface SolanaWatcherOptions {
  chain: SolanaChainConfig;
  db: Database;
  clock?: Clock;
  rpc?: SolanaRpc;
  /** follow reference keys up to this many open orders, token accounts beyond (default 64) */
  referenceLimit?: number;
  leaseMs?: number;
  /** getSignaturesForAddress page size (default 1000, the RPC's maximum) and calls per address per tick (default 20) */
  pageSize?: number;
  maxPages?: number;
  /**
   * Beyond this many followed addresses a tick reads only the token accounts whose amount changed
   * (getMultipleAccounts), plus a rotation that reads each one at least every `fullReadCycleTicks`
   * ticks (probe.ts). Defaults 16 and 300.
   */
  probeAbove?: number;
  fullReadCycleTicks?: number;
  holderId?: string;
  log?: ChainLogger;
  onTick?: (chainId: number, r: SolanaTick, head: { number: bigint; timestamp: bigint } | undefined) => void;
}

export type SolanaTick =
  | { kind: 'follower' }
  | { kind: 'error'; error: string }
  /**
   * `behind`: followed addresses not read to the head in this tick (a transaction not served yet, or
   * a backlog); `backlog`: those of them whose pages ran out (the loop ticks again at once)
   */
  | { kind: 'leader'; slot: bigint; followed: number; transfers: number; confirmed: number; invoiced: number; behind: number; backlog: number };

export class SolanaWatcher {
  readonly chain: SolanaChainConfig;
  readonly onTick: SolanaWatcherOptions['onTick'];
  lastHead: { number: bigint; timestamp: bigint } | undefined;
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly rpc: SolanaRpc;
  private readonly holder: string;
  private readonly leaseMs: number;
  private readonly referenceLimit: number;
  private readonly pageSize: number;
  private readonly maxPages: number;
  private readonly log: ChainLogger;
  private genesisChecked = false;
  private ticks = 0;
  private readonly probe: AccountProbe;
  /** (wallet, mint) → associated token account; derivation is pure, so cached for the process */
  private readonly ata = new Map<string, string>();

  constructor(opts: SolanaWatcherOptions) {
    this.chain = opts.chain;
    this.onTick = opts.onTick;
    this.db = opts.db;
    this.clock = opts.clock ?? systemClock;
    this.rpc = opts.rpc ?? createSolanaRpcClient(opts.chain.rpcUrl);
    this.holder = opts.holderId ?? `w-${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.leaseMs = opts.leaseMs ?? Math.max(5000, 3 * opts.chain.pollIntervalMs);
    this.referenceLimit = opts.referenceLimit ?? 64;
    this.pageSize = opts.pageSize ?? 1000;
    this.maxPages = opts.maxPages ?? 20;
    this.log = opts.log ?? createChainLogger('silent');
    this.probe = new AccountProbe({ minReads: opts.probeAbove ?? 16, cycleTicks: opts.fullReadCycleTicks ?? 300 });
  }

  async tick(): Promise<SolanaTick> {
    try {
      return await this.tickOnce();
    } catch (err) {
      const error = describeError(err);
      this.log.warn('solana watcher tick failed', { chain_id: this.chain.chainId, error });
      return { kind: 'error', error };
    }
  }

  release(): Promise<void> {
    return releaseLease(this.db, this.chain.chainId, this.holder);
  }

  private async tickOnce(): Promise<SolanaTick> {
    const startedAt = new Date(this.clock.now());
    if (!(await acquireLease(this.db, this.chain.chainId, this.holder, this.leaseMs))) return { kind: 'follower' };
    if (!this.genesisChecked) {
      const g = await this.rpc.getGenesisHash().send();
      if (g !== this.chain.genesisHash) return { kind: 'error', error: `genesis hash ${g} is not the configured ${this.chain.genesisHash}` };
      this.genesisChecked = true;
    }
    const confirm = this.chain.confirmCommitment;
    const slot = await this.rpc.getSlot({ commitment: confirm }).send();
    this.lastHead = { number: slot, timestamp: BigInt(Math.floor(startedAt.getTime() / 1000)) };
    // Few open orders: their references (one limit+1 probe tells); many: the distinct token accounts.
    const open = await repo.listAwaitingPayment(this.db, this.chain.chainId, this.referenceLimit + 1);
    const byReference = open.length <= this.referenceLimit;
    const addresses = byReference ? open.map((o) => referenceOf(o.id)) : await Promise.all((await repo.listPayToWallets(this.db, this.chain.chainId)).flatMap((w) => this.chain.tokens.map((t) => this.payTo({ pay_to_address: w, token_contract: t.mint }))));
    const accounts = byReference ? new Set<string>() : new Set(addresses);
    const cursors = await repo.loadCursors(this.db, this.chain.chainId);
    // An address whose backlog walk is unfinished is read to its end, followed or not any more.
    const walking = new Set([...cursors].filter(([, c]) => c.pages.length > 0).map(([a]) => a));
    const followed = [...new Set([...addresses, ...walking])];
    const out = { kind: 'leader' as const, slot, followed: followed.length, transfers: 0, confirmed: 0, invoiced: 0, behind: 0, backlog: 0 };
    const chainId = this.chain.chainId;
    // Reference keys are new per order and few (≤ referenceLimit): all read. Token accounts: probe.ts.
    const toRead = byReference ? followed : await this.probe.select(this.rpc, followed, walking, confirm);
    for (const address of toRead) {
      const read = await catchUp(
        this.rpc,
        address,
        cursors.get(address) ?? { until: undefined, pages: [] },
        { commitment: confirm, pageSize: this.pageSize, maxPages: this.maxPages },
        {
          savePages: (pages, end) => repo.saveBacklog(this.db, chainId, address, pages, end),
          process: async (s) => {
            const transfers = s.err === null ? await fetchTransfers(this.rpc, s.signature, confirm) : [];
            if (transfers === undefined) return false; // listed but not served yet at this level: next tick
            const moved = await this.db.transaction(async (tx) => {
              let n = 0;
              for (const t of transfers) n += await this.record(tx, t, accounts, startedAt);
              await repo.saveCursor(tx, chainId, address, s.signature);
              return n;
            });
            out.transfers += transfers.length;
            out.confirmed += moved;
            return true;
          },
        },
      );
      if (read === 'done') this.probe.read(address, { slot, at: startedAt });
      else out.behind++;
      if (read === 'more') out.backlog++;
    }
    out.invoiced = await this.finalityPass(startedAt);
    if (++this.ticks % 600 === 1) await repo.pruneCursors(this.db, chainId, followed);
    // A payment may still be unread in a backlog, or (token accounts) in an account the rotation has
    // not read since: the sweeper must not expire its order yet.
    const through = byReference ? { slot, at: startedAt } : this.probe.readThrough(followed);
    if (out.behind === 0 && through) await repo.saveScanPosition(this.db, chainId, through.slot, through.at, this.chain.genesisHash);
    return out;
  }

  /** The token account a DIRECT payment of `o` arrives in. */
  private async payTo(o: { pay_to_address: string; token_contract: string }): Promise<string> {
    const key = `${o.pay_to_address}:${o.token_contract}`;
    let a = this.ata.get(key);
    if (!a) {
      const token = this.chain.tokens.find((t) => t.mint === o.token_contract);
      if (!token) throw new Error(`order mint ${o.token_contract} is not configured on chain ${this.chain.chainId}`);
      [a] = await findAssociatedTokenPda({ owner: o.pay_to_address as Address, mint: o.token_contract as Address, tokenProgram: token.programId as Address });
      this.ata.set(key, a);
    }
    return a;
  }

  /**
   * Records one transfer and applies its consequence inside the caller's transaction; returns 1
   * when it moved an order. A transfer carrying none of our references is recorded only when it
   * lands in a followed token account (unmatched: never attributed by amount or sender).
   * One transfer, one purpose (orders/claims.ts, key: chain, signature, instruction index): a
   * transfer attributed to an order is claimed for it in this transaction; one another purpose
   * holds (e.g. a DELEGATE settlement the gateway sent, claimed whole before it was sent) is
   * recorded as `claimed`: seen, never an order's payment, no event.
   */
  private async record(tx: Queryable, t: SolanaTransfer, accounts: Set<string>, now: Date): Promise<number> {
    const base = {
      chainId: this.chain.chainId,
      mint: t.mint,
      signature: t.signature,
      instructionIndex: t.instructionIndex,
      slot: t.slot,
      blockTime: t.blockTime === null ? null : new Date(Number(t.blockTime) * 1000),
      from: t.authority,
      to: t.destination,
      amount: t.received ?? t.amount,
    };
    const orderId = t.references.map(orderIdOfReference).find((id) => id !== undefined);
    const o = orderId ? await repo.getSolanaOrder(tx, orderId) : undefined;
    const key = { chainId: this.chain.chainId, txRef: t.signature, index: t.instructionIndex };
    const held = await claimHolder(tx, key);
    if (held && !(held.purpose === 'order' && held.index === t.instructionIndex && held.purposeId === o?.id)) {
      if (o || accounts.has(t.destination)) await repo.insertTransfer(tx, { ...base, matchStatus: 'claimed', orderId: null });
      return 0;
    }
    if (!o) {
      if (accounts.has(t.destination)) await repo.insertTransfer(tx, { ...base, matchStatus: 'unmatched', orderId: null });
      return 0;
    }
    const terms = { orderId: o.id, reference: referenceOf(o.id), mint: o.token_contract, payTo: await this.payTo(o), amount: BigInt(o.amount_wei) };
    const a = attribute(t, (r) => (r === terms.reference ? terms : undefined));
    if (a.kind !== 'paid' && a.kind !== 'underpaid') {
      await repo.insertTransfer(tx, { ...base, matchStatus: 'unmatched', orderId: null });
      this.log.info('solana transfer not attributed', { chain_id: this.chain.chainId, order_id: o.id, reason: a.kind });
      return 0;
    }
    // Mined after expires_at (before the sweeper ran) is late, as on EVM: it never pays the order.
    const matchStatus = recordedKind(a.kind, o, t.blockTime);
    if ((await claimForOrder(tx, key, { orderId: o.id, amountWei: base.amount, payer: t.authority })) !== 'claimed') {
      await repo.insertTransfer(tx, { ...base, matchStatus: 'claimed', orderId: null });
      return 0;
    }
    const id = await repo.insertTransfer(tx, { ...base, matchStatus, orderId: o.id });
    if (id === undefined) return 0; // already recorded: nothing happens twice
    if (matchStatus !== 'matched') {
      // order.underpaid / order.late_payment / order.duplicate_payment, as for an EVM transfer
      const transfer = { txHash: t.signature as `0x${string}`, logIndex: t.instructionIndex, blockNumber: t.slot, from: t.authority as `0x${string}`, value: base.amount };
      await emitRecordedPayment(tx, { kind: matchStatus, orderId: o.id }, transfer, { head: t.slot, now });
      return 0;
    }
    const paid = await orders.patchOrder(tx, o.id, 'CHECKOUT_VERIFIED', {
      transfer_id: id,
      tx_hash: t.signature,
      log_index: t.instructionIndex,
      block_number: Number(t.slot),
      block_hash: '',
      paid_amount_wei: a.received.toString(),
      payment_seen_at: now,
      confirmations: 0,
    });
    if (!paid) throw new Error(`order ${o.id} left CHECKOUT_VERIFIED while locked for matching`);
    const finalNow = this.chain.confirmCommitment === 'finalized';
    const moved = await transitionOrder(tx, {
      orderId: o.id,
      from: 'CHECKOUT_VERIFIED',
      trigger: finalNow ? 'invoice' : 'confirm',
      patch: { confirmed_at: now, ...(finalNow ? { invoiced_at: now } : {}) },
      now,
      detail: { tx_hash: t.signature, instruction_index: t.instructionIndex, slot: t.slot.toString(), commitment: this.chain.confirmCommitment },
    });
    return moved ? 1 : 0;
  }

  /** Invoices attributed payments whose transaction is now finalized. */
  private async finalityPass(now: Date): Promise<number> {
    const pending = await repo.listAwaitingFinality(this.db, this.chain.chainId);
    let invoiced = 0;
    for (let i = 0; i < pending.length; i += 256) {
      const batch = pending.slice(i, i + 256);
      const { value } = await this.rpc.getSignatureStatuses(batch.map((p) => p.tx_hash as Signature)).send();
      for (let j = 0; j < batch.length; j++) {
        const p = batch[j]!;
        const st = value[j];
        if (st?.confirmationStatus !== 'finalized') continue;
        const moved = await this.db.transaction((tx) =>
          transitionOrder(tx, {
            orderId: p.id,
            from: p.status,
            trigger: 'invoice',
            patch: { invoiced_at: now, ...(p.status === 'CHECKOUT_VERIFIED' ? { confirmed_at: now } : {}) },
            now,
            detail: { tx_hash: p.tx_hash, slot: st.slot.toString(), commitment: 'finalized' },
          }),
        );
        if (moved) invoiced++;
      }
    }
    return invoiced;
  }
}

/** The watcher loop: every poll interval, at once again while a backlog is being read (pages are bounded per tick), backoff after errors. */
export function runSolanaWatcher(w: SolanaWatcher): Worker {
  let stopped = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  const pollMs = w.chain.pollIntervalMs;
  const done = (async () => {
    let failures = 0;
    while (!stopped) {
      const r = await w.tick();
      w.onTick?.(w.chain.chainId, r, w.lastHead);
      const delay = r.kind === 'error' ? tickBackoff(++failures, pollMs) : ((failures = 0), r.kind === 'leader' && r.backlog > 0 ? 0 : pollMs);
      if (!stopped) await sleep(delay);
    }
  })();
  return {
    name: `solana-watcher:${w.chain.chainId}`,
    async stop() {
      stopped = true;
      wake?.();
      await done;
      await w.release().catch(() => {});
    },
  };
}
