/**
 * The SOL_APPROVE_XFER worker of one Solana cluster (DELEGATE on Solana). One leader per cluster
 * across processes (a `worker_leases` row, as the EVM settlement worker). A tick:
 *  1. reconciles open attempts (solana_settlements) with getSignatureStatuses: confirmed →
 *     PAYMENT_CONFIRMED, finalized → INVOICED (settlement_tx_hash, settled_at), failed on chain →
 *     FAILED; an attempt not seen yet is sent again byte for byte (same signature: it lands at most
 *     once) until its blockhash expires, then it is marked `expired` and may be replaced;
 *  2. fails orders past expiry whose approval never came (FAILED + order.failed);
 *  3. notices approvals: for each waiting order, the payer's `approveChecked` carrying the order's
 *     reference key (approval.ts) AND the token account still delegating at least the amount to
 *     the gateway's key; then builds and signs the pull (pull.ts), RECORDS it with the claim of its
 *     transfers for the order (orders/claims.ts, whole transaction), and only then sends.
 * Every order status change goes through orders/transition.ts (events in the same transaction).
 */
import { randomBytes } from 'node:crypto';
import type { Signature } from '@solana/kit';
import type { Clock } from '../../../clock.ts';
import type { SolanaChainConfig } from '../../../config/schema.ts';
import type { SolanaDelegateKey } from '../../../config/secrets.ts';
import type { Database } from '../../../db/database.ts';
import * as orders from '../../../orders/repo.ts';
import { transitionOrder } from '../../../orders/transition.ts';
import type { OrderStatus } from '../../../orders/states.ts';
import { acquireWorkerLease, releaseWorkerLease } from '../../../settlement/repo.ts';
import { startWorkers, type Worker } from '../../../workers.ts';
import { createChainLogger, type ChainLogger } from '../../evm/context.ts';
import { describeError } from '../../evm/rpc.ts';
import { createSolanaRpcClient, type SolanaRpc } from '../rpc.ts';
import { findApproval, tokenAccountState } from './approval.ts';
import { buildPull } from './pull.ts';
import * as repo from './repo.ts';

const BATCH = 50;

export interface SolanaSettlementTick {
  leader: boolean;
  sent: string[];
  confirmed: string[];
  invoiced: string[];
  failed: string[];
}

export interface SolanaSettlementOptions {
  chain: SolanaChainConfig;
  key: SolanaDelegateKey;
  db: Database;
  clock: Clock;
  rpc?: SolanaRpc;
  leaseMs?: number;
  log?: ChainLogger;
  /** orders per step and tick (default 50) */
  batch?: number;
  /** tests: true = stop after recording an attempt, before sending it (a crash at that point) */
  crashAfterRecord?: (orderId: string) => boolean;
}

export class SolanaSettlementWorker {
  readonly holder = `ss-${randomBytes(4).toString('hex')}`;
  readonly #o: SolanaSettlementOptions;
  readonly #rpc: SolanaRpc;
  readonly #log: ChainLogger;
  /** the last waiting order looked at: the next tick continues after it (starts over at the end) */
  #after = '';

  constructor(o: SolanaSettlementOptions) {
    this.#o = o;
    this.#rpc = o.rpc ?? createSolanaRpcClient(o.chain.rpcUrl);
    this.#log = o.log ?? createChainLogger('silent');
  }

  get leaseName(): string {
    return `solana-settlement:${this.#o.chain.chainId}`;
  }

  async tick(): Promise<SolanaSettlementTick> {
    const out: SolanaSettlementTick = { leader: false, sent: [], confirmed: [], invoiced: [], failed: [] };
    const { db, chain } = this.#o;
    if (!(await acquireWorkerLease(db, this.leaseName, this.holder, this.#o.leaseMs ?? Math.max(5_000, chain.pollIntervalMs * 10)))) return out;
    out.leader = true;
    await this.#reconcile(out);
    await this.#failUnapproved(out);
    await this.#pullApproved(out);
    return out;
  }

  release(): Promise<void> {
    return releaseWorkerLease(this.#o.db, this.leaseName, this.holder).catch(() => undefined);
  }

  #now(): Date {
    return new Date(this.#o.clock.now());
  }

  async #reconcile(out: SolanaSettlementTick) {
    const { db, chain } = this.#o;
    const open = await repo.openAttempts(db, chain.chainId, BATCH);
    if (!open.length) return;
    const { value } = await this.#rpc
      .getSignatureStatuses(
        open.map((a) => a.signature as Signature),
        { searchTransactionHistory: true },
      )
      .send();
    let height: bigint | undefined;
    for (const [i, a] of open.entries()) {
      const st = value[i];
      const from = a.order_status as OrderStatus;
      const live = from === 'CHECKOUT_VERIFIED' || from === 'PAYMENT_CONFIRMED';
      if (st?.err) {
        const reason = `settlement transaction failed: ${JSON.stringify(st.err, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`.slice(0, 500);
        const moved = await db.transaction(async (tx) => {
          await repo.setAttempt(tx, a.id, [a.status], 'failed', { error: reason, slot: st.slot });
          return live ? transitionOrder(tx, { orderId: a.order_id, from, trigger: 'fail', now: this.#now(), patch: { failure_reason: reason, settlement_tx_hash: a.signature }, detail: { settlement_tx_hash: a.signature, reason } }) : undefined;
        });
        if (moved) out.failed.push(a.order_id);
      } else if (st?.confirmationStatus === 'finalized') {
        const now = this.#now();
        const moved = await db.transaction(async (tx) => {
          await repo.setAttempt(tx, a.id, [a.status], 'finalized', { slot: st.slot });
          if (!live) return undefined;
          const patch = { invoiced_at: now, settled_at: now, settlement_tx_hash: a.signature, ...(from === 'CHECKOUT_VERIFIED' ? { confirmed_at: now } : {}) };
          return transitionOrder(tx, { orderId: a.order_id, from, trigger: 'invoice', now, patch, detail: { settlement_tx_hash: a.signature, slot: st.slot.toString(), commitment: 'finalized' } });
        });
        if (moved) out.invoiced.push(a.order_id);
      } else if (st?.confirmationStatus === 'confirmed') {
        if (a.status === 'confirmed') continue;
        const now = this.#now();
        const moved = await db.transaction(async (tx) => {
          await repo.setAttempt(tx, a.id, [a.status], 'confirmed', { slot: st.slot });
          return from === 'CHECKOUT_VERIFIED'
            ? transitionOrder(tx, { orderId: a.order_id, from, trigger: 'confirm', now, patch: { confirmed_at: now, settlement_tx_hash: a.signature }, detail: { settlement_tx_hash: a.signature, slot: st.slot.toString(), commitment: 'confirmed' } })
            : undefined;
        });
        if (moved) out.confirmed.push(a.order_id);
      } else if (!st) {
        // Not seen (processed attempts are left alone: they are on their way). Expired blockhash:
        // it can never land any more, so the order is free for a new attempt; else send it again.
        height ??= await this.#rpc.getBlockHeight({ commitment: 'confirmed' }).send();
        if (height > a.last_valid_block_height) {
          await db.transaction(async (tx) => {
            if (await repo.setAttempt(tx, a.id, [a.status], 'expired', { error: 'blockhash expired before the transaction landed' })) {
              await repo.releaseSettlementClaim(tx, chain.chainId, a.signature, a.order_id);
              if (live) await orders.patchOrder(tx, a.order_id, from, { settlement_tx_hash: null });
            }
          });
          this.#log.info('solana settlement attempt expired unseen', { chain_id: chain.chainId, order_id: a.order_id });
        } else await this.#send(a.id, a.order_id, a.wire_tx, a.status);
      }
    }
  }

  /** Sends recorded bytes; a refusal (preflight) leaves the row for the next tick or its expiry. */
  async #send(id: number, orderId: string, wire: string, status: 'pending' | 'sent' | 'confirmed'): Promise<boolean> {
    try {
      await this.#rpc.sendTransaction(wire as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    } catch (err) {
      this.#log.warn('solana settlement send refused', { chain_id: this.#o.chain.chainId, order_id: orderId, error: describeError(err) });
      return false;
    }
    if (status === 'pending') await repo.setAttempt(this.#o.db, id, ['pending'], 'sent');
    return true;
  }

  async #failUnapproved(out: SolanaSettlementTick) {
    const { db, chain } = this.#o;
    const now = this.#now();
    for (const o of await repo.ordersExpiredUnapproved(db, chain.chainId, now, BATCH)) {
      const reason = 'the payer did not approve the delegate for this order before it expired';
      const moved = await db.transaction((tx) => transitionOrder(tx, { orderId: o.id, from: 'CHECKOUT_VERIFIED', trigger: 'fail', now, patch: { failure_reason: reason }, detail: { reason } }));
      if (moved) out.failed.push(o.id);
    }
  }

  async #pullApproved(out: SolanaSettlementTick) {
    const { db, chain, key } = this.#o;
    const batch = this.#o.batch ?? BATCH;
    const page = await repo.ordersAwaitingApproval(db, chain.chainId, this.#now(), batch, this.#after);
    this.#after = page.length < batch ? '' : page[page.length - 1]!.id;
    for (const o of page) {
      const approval = await findApproval(this.#rpc, chain, o, key.address);
      if (!approval) continue;
      // The approval must still stand: SPL allows one delegate per account, which a later approve
      // (another order, another spender) or a revoke replaces.
      const acct = await tokenAccountState(this.#rpc, approval.source);
      const amount = BigInt(o.amount_wei);
      if (acct?.state !== 1 || acct.delegate !== key.address || acct.delegatedAmount < amount || acct.amount < amount) continue;
      if (!o.wallet) {
        const reason = `the merchant has no ${o.token_symbol} wallet on chain ${chain.chainId} to settle to`;
        const moved = await db.transaction((tx) => transitionOrder(tx, { orderId: o.id, from: 'CHECKOUT_VERIFIED', trigger: 'fail', now: this.#now(), patch: { failure_reason: reason }, detail: { reason } }));
        if (moved) out.failed.push(o.id);
        continue;
      }
      const pull = await buildPull(this.#rpc, chain, key, { ...o, wallet: o.wallet });
      // Record-before-send: the signed bytes, the order's settlement_tx_hash and the claim of the
      // pull's transfers (orders/claims.ts) in one commit. (An order that left CHECKOUT_VERIFIED
      // meanwhile, e.g. cancelled, or a signature another purpose holds, rolls the record back.)
      const id = await db
        .transaction(async (tx) => {
          const rec = await repo.recordAttempt(tx, { orderId: o.id, chainId: chain.chainId, signature: pull.signature, wire: pull.wire, lastValidBlockHeight: pull.lastValidBlockHeight, approvalSignature: approval.signature });
          if (rec === undefined) return undefined;
          if (!(await repo.claimSettlement(tx, chain.chainId, pull.signature, o.id))) throw new RolledBack();
          if (!(await orders.patchOrder(tx, o.id, 'CHECKOUT_VERIFIED', { settlement_tx_hash: pull.signature, tx_hash: approval.signature }))) throw new RolledBack();
          return rec;
        })
        .catch((err) => (err instanceof RolledBack ? undefined : Promise.reject(err)));
      if (id === undefined) continue;
      if (this.#o.crashAfterRecord?.(o.id)) continue;
      if (await this.#send(id, o.id, pull.wire, 'pending')) out.sent.push(o.id);
    }
  }
}

class RolledBack extends Error {}

/** The worker loop of one cluster; a failing tick is logged and retried at the next interval. */
export function runSolanaSettlement(w: SolanaSettlementWorker, intervalMs: number): Worker {
  const [loop] = startWorkers([{ name: `solana-settlement-${w.leaseName}`, intervalMs, run: async () => void (await w.tick()) }]);
  return {
    name: loop!.name,
    stop: async () => {
      await loop!.stop();
      await w.release();
    },
  };
}
