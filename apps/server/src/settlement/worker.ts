import { randomBytes } from 'node:crypto';
import { callbackDataFor } from '@tollgate/contracts';
import type { Hex } from 'viem';
import type { ChainConfig } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { transitionOrder } from '../orders/transition.ts';
import { startWorkers, type Worker } from '../workers.ts';
import type { DelegateService } from './delegate.ts';
import type { SettlementExecutor } from './executor.ts';
import { DELEGATE_FLOW_NAMES, delegateFlowNamed } from './flows/index.ts';
import { finishDelegateRefunds } from '../refunds/complete.ts';
import * as repo from './repo.ts';
import { signRequestOf } from './sign-request.ts';

/**
 * The settlement worker of one chain: turns final DELEGATE payments into settlement transactions
 * and settlement outcomes into order transitions. One leader per chain across processes (a
 * `worker_leases` row, the watcher's lease pattern); the executor under it is crash-safe on its
 * own (settlement/executor.ts: the raw transaction is recorded before it is sent, the contract
 * settles an order id once).
 *
 * Each tick, in this order:
 *   1. reconcile: re-broadcast recorded-but-unsent rows, read receipts of sent ones (a settlement
 *      reorged out loses its receipt and is broadcast again: same bytes, same nonce), replace the
 *      stuck ones with higher fees (settlement/tracker.ts);
 *   2. apply finished rows (the one mined attempt of each settlement; replaced ones never apply):
 *      confirmed at finality → INVOICED (settlement_tx_hash, settled_at,
 *      callback_status succeeded); reverted on chain → FAILED;
 *   3. fail paid orders whose signing request is unsigned at expiry;
 *   4. settle due orders, all at once (their simulations run concurrently and the executor records
 *      them in one commit): payment final and signed → simulate; a simulated callback failure
 *      fails the order without sending anything; otherwise sign, record, broadcast;
 *   5. approve-and-pull: live orders of a pulling flow whose payer approved the amount.
 * RPC faults abort the tick and back off (doubling up to 30 s); nothing is half-applied because
 * every step's effect is a row written before the next step reads it.
 */

/** Contract errors that mean "this order's callback cannot succeed": the order fails. */
const CALLBACK_FAILURES = new Set(['CallbackReverted', 'CallbackRejected', 'CallbackNotContract', 'CallbackDomainUnsupported', 'InvalidCalldataSignature', 'CalldataSignatureExpired', 'UnsignedCalldata', 'CalldataTooLarge']);
/** Orders handled per step and tick; the rest wait for the next tick. */
const BATCH = 50;
/** An approve-and-pull is not started this close to the order's expiry (the pull must be seen before it). */
const PULL_EXPIRY_MARGIN_MS = 60_000;

interface SettlementWorkerOptions {
  db: Database;
  chain: ChainConfig;
  delegate: DelegateService;
  clock: Clock;
  leaseMs?: number;
  onTick?: (t: SettlementTick) => void;
}

export interface SettlementTick {
  leader: boolean;
  sent: string[];
  invoiced: string[];
  failed: string[];
}

class SettlementWorker {
  readonly holder = `s-${randomBytes(4).toString('hex')}`;
  readonly #o: SettlementWorkerOptions;
  readonly #ex: SettlementExecutor;
  #backoffMs = 0;
  readonly #callbacks = new Map<string, Promise<repo.CallbackRow | undefined>>();
  #retryAt = 0;

  constructor(o: SettlementWorkerOptions) {
    this.#o = o;
    const ex = o.delegate.executorFor(o.chain.chainId);
    if (!ex) throw new Error(`chain ${o.chain.chainId}: DELEGATE is not set up`);
    this.#ex = ex;
  }

  get leaseName(): string {
    return `settlement:${this.#o.chain.chainId}`;
  }

  /** One pass; RPC faults throw after arming the backoff (the loop logs them). */
  async tick(): Promise<SettlementTick> {
    const out: SettlementTick = { leader: false, sent: [], invoiced: [], failed: [] };
    if (Date.now() < this.#retryAt) return out;
    const { db, chain } = this.#o;
    const leaseMs = this.#o.leaseMs ?? Math.max(5_000, chain.pollIntervalMs * 10);
    if (!(await repo.acquireWorkerLease(db, this.leaseName, this.holder, leaseMs))) return out;
    out.leader = true;
    try {
      await this.#ex.reconcile();
      await this.#applyFinished(out);
      await this.#failUnsigned(out);
      await this.#settleDue(out);
      await this.#pull(out);
      this.#backoffMs = 0;
    } catch (err) {
      this.#backoffMs = Math.min(30_000, Math.max(250, this.#backoffMs * 2));
      this.#retryAt = Date.now() + this.#backoffMs;
      throw err;
    } finally {
      this.#o.onTick?.(out);
    }
    return out;
  }

  async release(): Promise<void> {
    await repo.releaseWorkerLease(this.#o.db, this.leaseName, this.holder).catch(() => undefined);
  }

  async #applyFinished(out: SettlementTick) {
    const { db, chain } = this.#o;
    // A refund replaced by a fee bump: the order names the refund transaction that was mined.
    await repo.syncRefundTxHashes(db, chain.chainId);
    // Mined (or failed) refunds: their rows of the refunds model, and order.refunded.
    await finishDelegateRefunds(db, chain.chainId, new Date(this.#o.clock.now()));
    for (const rec of await repo.finishedUnapplied(db, chain.chainId, BATCH)) {
      const now = new Date(this.#o.clock.now());
      const ok = rec.status === 'confirmed';
      const moved = await db.transaction((tx) =>
        transitionOrder(tx, {
          orderId: rec.orderId,
          from: rec.orderStatus === 'PAYMENT_CONFIRMED' ? 'PAYMENT_CONFIRMED' : 'CHECKOUT_VERIFIED',
          trigger: ok ? 'invoice' : 'fail',
          now,
          patch: ok
            ? { invoiced_at: now, settled_at: now, settlement_tx_hash: rec.txHash, ...(rec.callbackId ? { callback_status: 'succeeded' } : {}) }
            : { failure_reason: `settlement transaction failed: ${rec.failureReason ?? 'reverted'}`, settlement_tx_hash: rec.txHash, ...(rec.callbackId ? { callback_status: 'failed' } : {}) },
          detail: { settlement_tx_hash: rec.txHash, block_number: rec.blockNumber },
        }),
      );
      if (moved) (ok ? out.invoiced : out.failed).push(rec.orderId);
    }
  }

  async #failUnsigned(out: SettlementTick) {
    const { db, chain } = this.#o;
    const now = new Date(this.#o.clock.now());
    for (const o of await repo.unsignedExpiredOrders(db, chain.chainId, DELEGATE_FLOW_NAMES, now, BATCH)) {
      if (await this.#fail(o, 'the payer did not sign the calldata_sign_request before the order expired')) out.failed.push(o.id);
    }
  }

  async #settleDue(out: SettlementTick) {
    const { db, chain } = this.#o;
    const due = await repo.ordersDueForSettlement(db, chain.chainId, DELEGATE_FLOW_NAMES, chain.finalityConfirmations, BATCH);
    await all(due.map((o) => () => this.#settle(o, 'pool', out)));
  }

  async #pull(out: SettlementTick) {
    const { db, chain } = this.#o;
    const pulling = DELEGATE_FLOW_NAMES.filter((n) => n === 'ERC20_APPROVE_XFER');
    const minExpiry = new Date(this.#o.clock.now() + PULL_EXPIRY_MARGIN_MS);
    const todo = await repo.ordersToPull(db, chain.chainId, pulling, minExpiry, BATCH);
    await all(
      todo.map((o) => async () => {
        const flow = delegateFlowNamed(o.flow)!;
        const settlement = chain.settlementContract!;
        if (!(await flow.canPull(this.#ex.client, { token: o.token_contract, payer: o.from_address, amount: BigInt(o.amount_wei), settlement }))) return;
        await this.#settle(o, 'allowance', out);
      }),
    );
  }

  async #settle(o: repo.DelegateOrderRow, source: 'pool' | 'allowance', out: SettlementTick) {
    const { db, chain } = this.#o;
    const cbRow = o.callback_id ? await this.#callback(o.callback_id) : undefined;
    const payee = (cbRow?.callback_contract ?? o.wallet) as Hex | null;
    if (!payee) {
      if (await this.#fail(o, 'the merchant has neither a callback nor a wallet for this token on the chain')) out.failed.push(o.id);
      return;
    }
    let cb;
    if (o.callback_calldata !== null && o.calldata_signature) {
      const req = cbRow && chain.settlementContract ? signRequestOf(o, cbRow, chain.settlementContract) : undefined;
      if (req) cb = callbackDataFor(req, o.callback_calldata as Hex, o.calldata_signature);
    }
    const p = await this.#ex.prepare(
      {
        orderId: o.id,
        payer: o.from_address,
        token: o.token_contract,
        amount: BigInt(o.amount_wei),
        payee,
        callback: cbRow !== undefined,
        ...(cb ? { cb } : {}),
        source,
      },
      {
        // In the recording transaction (one commit for the whole batch of settlements).
        also: (q, rec) => repo.markSettlementSent(q, o.id, rec.txHash),
      },
    );
    if (p.kind === 'refused') {
      // A callback that cannot succeed fails the order now, with nothing sent. Anything else (a
      // pool not yet holding the funds, an allowance withdrawn) is retried on a later tick.
      if (CALLBACK_FAILURES.has(p.error) && (await this.#fail(o, `callback failed: ${p.detail ?? p.error}`, true))) out.failed.push(o.id);
      return;
    }
    if (p.kind === 'existing') await repo.markSettlementSent(db, o.id, p.record.txHash);
    if (p.record.status === 'pending') await this.#ex.broadcast(p.record);
    out.sent.push(o.id);
  }

  /**
   * A callback registration by id. Rows are never edited (a new registration closes the old one
   * and gets a new id), so they are cached: a tick settling 50 orders reads each once, not 50 times.
   */
  #callback(id: string): Promise<repo.CallbackRow | undefined> {
    let p = this.#callbacks.get(id);
    if (!p) {
      if (this.#callbacks.size >= 1_000) this.#callbacks.clear();
      p = repo.getCallback(this.#o.db, id);
      this.#callbacks.set(id, p);
      p.then(
        (row) => row ?? this.#callbacks.delete(id),
        () => this.#callbacks.delete(id),
      );
    }
    return p;
  }

  async #fail(o: repo.DelegateOrderRow, reason: string, callbackFailed = false): Promise<boolean> {
    const now = new Date(this.#o.clock.now());
    const from = o.status === 'PAYMENT_CONFIRMED' ? 'PAYMENT_CONFIRMED' : 'CHECKOUT_VERIFIED';
    const row = await this.#o.db.transaction((tx) =>
      transitionOrder(tx, {
        orderId: o.id,
        from,
        trigger: 'fail',
        now,
        patch: { failure_reason: reason, ...(o.callback_id && callbackFailed ? { callback_status: 'failed' } : {}) },
        detail: { reason },
      }),
    );
    return row !== undefined;
  }
}

/**
 * Runs the tasks concurrently (the executor's group commit records what they prepare together);
 * every task runs to its end, then the first failure is thrown (the tick backs off).
 */
async function all(tasks: (() => Promise<void>)[]): Promise<void> {
  const results = await Promise.allSettled(tasks.map((t) => t()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** One settlement worker per chain with DELEGATE set up, each a loop of `pollIntervalMs`. */
export function startSettlementWorkers(deps: { db: Database; config: { chains: ChainConfig[] }; delegate: DelegateService; clock: Clock }, opts: { onTick?: (t: SettlementTick) => void } = {}): Worker[] {
  const workers: Worker[] = [];
  for (const chain of deps.config.chains) {
    if (!deps.delegate.executorFor(chain.chainId)) continue;
    const w = new SettlementWorker({ db: deps.db, chain, delegate: deps.delegate, clock: deps.clock, ...(opts.onTick ? { onTick: opts.onTick } : {}) });
    const [loop] = startWorkers([{ name: `settlement-${chain.chainId}`, intervalMs: chain.pollIntervalMs, run: async () => void (await w.tick()) }]);
    workers.push({
      name: loop!.name,
      stop: async () => {
        await loop!.stop();
        await w.release();
      },
    });
  }
  return workers;
}
