import { NO_CALLBACK_DATA, orderIdToBytes32, TollgateSettlementArtifact } from '@tollgate/contracts';
import { createPublicClient, encodeFunctionData, keccak256, type Hex, type LocalAccount, type PublicClient } from 'viem';
import type { ChainConfig } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { KeyedBatcher } from '../db/batcher.ts';
import { describeError } from '../chain/evm/rpc.ts';
import { chainTransport } from '../chain/evm/transport.ts';
import { AttemptTracker } from './tracker.ts';
import { refusalOf } from './revert-reason.ts';
import type { AlsoRecord, ExecutorOptions, Plan, PrepareOutcome, SettleRequest } from './types.ts';
import { processLog } from '../log.ts';
import { adoptGenesis, findSettlement, insertSettlement, recordedNonces, resetEpoch, markSentMany, settlementAttempts, unfinishedSettlements, type SettlementRecord } from './repo.ts';

/**
 * The DELEGATE executor of one chain: turns "settle order X" into exactly one on-chain
 * `TollgateSettlement.settle` transaction, crash-safe.
 *
 * Order of effects (the crash-safety argument):
 *   1. simulate + estimate gas (nothing recorded, nothing sent: a refusal changes nothing);
 *   2. sign locally with the next nonce and INSERT the row (status pending) with the raw bytes;
 *   3. broadcast those bytes, then mark the row sent;
 *   4. read the receipt; confirmed at `confirmations` depth, failed when reverted; a transaction
 *      left unmined past the chain's fee-bump threshold is replaced (same nonce, higher fees), the
 *      replacement recorded before it is sent like in 2 (settlement/tracker.ts).
 * A process killed after 2 finds the row on restart and broadcasts the same bytes (same hash,
 * same nonce: a node takes them at most once); killed after 3, it finds the receipt. A second
 * attempt for the same order finds the row (UNIQUE per order and attempt) and sends nothing; and if
 * the database were lost, the contract refuses the order a second time (`OrderAlreadyProcessed`).
 *
 * Throughput: step 1 runs outside any lock, concurrently for concurrent callers. Step 2 is a group
 * commit (db/batcher.ts with one batch in flight, which is the nonce lock): the settlements queued
 * while a batch records are signed with consecutive nonces and recorded in ONE transaction, so N
 * concurrent settlements cost one fee read, one nonce read and one commit. Nothing of a batch is
 * returned (and so nothing is broadcast) before its commit: record-before-send holds per row.
 *
 * One executor instance per chain and key at a time (the caller holds the chain's lease): the
 * nonce is allocated by the batch, from max(chain pending nonce, last recorded + 1), counting only
 * rows of the chain's current epoch: a chain restarted under the same id (another block 0, or its
 * nonce below one of our confirmed transactions) starts a new epoch and the executor continues from
 * the chain's own nonce (#epochNow, #recordLocked, migration 0025).
 */

export type { AlsoRecord, ExecutorOptions, Plan, PrepareOutcome, SettleRequest } from './types.ts';

/** Node answers meaning "these exact bytes are already in the pool or mined". */
const ALREADY_SENT_RE = /already known|known transaction|nonce too low|transaction already imported|already exists/i;

interface Queued {
  plan: Plan;
  gas: bigint;
  /** Nonce-lock reads started with the simulation while no batch was running (see #prepare). */
  early?: { epoch: number; reads: Promise<LockReads> };
}
type Epoch = { genesis: Hex; epoch: number };
type LockReads = [fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }, chainNonce: number, recorded: Epoch & { last: number; confirmed: number }];
/** A batch answers each item, or the error of that item alone (see #recordBatch). */
type Recorded = { ok: PrepareOutcome } | { err: unknown };

export class SettlementExecutor {
  readonly client: PublicClient;
  readonly #account: LocalAccount;
  readonly #db: Database;
  readonly #chain: ChainConfig;
  readonly #marginBps: bigint;
  readonly #recorder: KeyedBatcher<Queued, Recorded>;
  readonly #marker: KeyedBatcher<number, SettlementRecord | undefined>;
  readonly #tracker: AttemptTracker;
  /** Batches finished (committed or failed): nonce reads made before the latest finish are stale. */
  #epoch = 0;
  #recording = 0;
  /** The chain's genesis and executor epoch as last adopted (adoptGenesis); read again on every reconcile(). */
  #epochRead: Promise<Epoch> | undefined;

  constructor(opts: ExecutorOptions) {
    // A chain without a settlement contract still has an executor for calls to other contracts
    // (x402 settlements call the token itself); settle/refund refuse there (#contract).
    this.#chain = opts.chain;
    this.#db = opts.db;
    // Raw key, keystore or remote signer (signers/port.ts): each signs exactly the fields given.
    this.#account = opts.signer.account();
    this.#marginBps = BigInt(opts.gasMarginBps ?? 2_500);
    this.client = createPublicClient({ transport: chainTransport(opts.chain, { timeoutMs: opts.timeoutMs ?? 10_000 }) });
    // One batch in flight: the batches are the nonce lock (two must not read the same next nonce).
    this.#recorder = new KeyedBatcher((_k, items) => this.#recordBatch(items), { maxBatch: opts.maxBatch ?? 64 });
    // The `sent` marks of concurrent broadcasts, one UPDATE for all (a mark is not needed for
    // safety: a pending row is re-broadcast, which a node answers "already known").
    this.#marker = new KeyedBatcher(
      async (_k, ids) => {
        const byId = new Map((await markSentMany(this.#db, ids)).map((r) => [r.id, r]));
        return ids.map((id) => byId.get(id));
      },
      { maxBatch: 256, maxInFlight: 2 },
    );
    this.#tracker = new AttemptTracker({ db: this.#db, chain: opts.chain, client: this.client, account: this.#account, broadcast: (r) => this.broadcast(r), resend: (r) => this.#sendRaw(r) });
  }

  get executorAddress(): Hex {
    return this.#account.address;
  }

  /** Prepare, broadcast and wait for confirmation: the whole path of one settlement. */
  async settle(req: SettleRequest, opts: { pollMs?: number; timeoutMs?: number } = {}): Promise<PrepareOutcome> {
    return this.finish(await this.prepare(req), opts);
  }

  /** Broadcasts a prepared row if needed and waits for its outcome. */
  async finish(p: PrepareOutcome, opts: { pollMs?: number; timeoutMs?: number } = {}): Promise<PrepareOutcome> {
    if (p.kind === 'refused') return p;
    let rec = p.record;
    if (rec.status === 'pending') rec = await this.broadcast(rec);
    if (rec.status === 'sent') rec = await this.waitFinal(rec, opts);
    return { ...p, record: rec };
  }

  /** Steps 1–2 of a settlement: simulate, sign with the next nonce, record (pending). Sends nothing. */
  prepare(req: SettleRequest, opts: { also?: AlsoRecord } = {}): Promise<PrepareOutcome> {
    const abi = TollgateSettlementArtifact.abi;
    const args = [{ orderId: orderIdToBytes32(req.orderId), payer: req.payer, token: req.token, amount: req.amount, payee: req.payee, callback: req.callback === true }, req.cb ?? NO_CALLBACK_DATA] as const;
    const functionName = req.source === 'allowance' ? 'settleFromAllowance' : 'settle';
    return this.#prepare({
      kind: 'settle',
      orderId: req.orderId,
      data: encodeFunctionData({ abi, functionName, args }),
      ...(opts.also ? { also: opts.also } : {}),
      estimate: (account) => this.client.estimateContractGas({ address: this.#contract(), abi, functionName, args, account }),
    });
  }

  /**
   * Steps 1–2 of a refund of an unsettled order's pooled funds to its payer (the contract marks
   * the order Refunded: it can never settle afterwards). Broadcast and confirm like a settlement.
   */
  prepareRefund(req: Omit<SettleRequest, 'payee'>, opts: { also?: AlsoRecord } = {}): Promise<PrepareOutcome> {
    const abi = TollgateSettlementArtifact.abi;
    const args = [orderIdToBytes32(req.orderId), req.payer, req.token, req.amount] as const;
    return this.#prepare({
      kind: 'refund',
      orderId: req.orderId,
      data: encodeFunctionData({ abi, functionName: 'refund', args }),
      ...(opts.also ? { also: opts.also } : {}),
      estimate: (account) => this.client.estimateContractGas({ address: this.#contract(), abi, functionName: 'refund', args, account }),
    });
  }

  /**
   * Steps 1–2 of any other call of the executor key (`plan.to`, e.g. an EIP-3009
   * `transferWithAuthorization` on a token for x402): same simulate → sign → record path, one
   * first attempt per (chain, `plan.orderId`, `plan.kind`). Broadcast and confirm like a settlement.
   */
  prepareCall(plan: Plan & { to: Hex }): Promise<PrepareOutcome> {
    return this.#prepare(plan);
  }

  #contract(): Hex {
    const c = this.#chain.settlementContract;
    if (!c) throw new Error(`chain ${this.#chain.chainId} has no settlement contract`);
    return c;
  }

  async #prepare(plan: Plan): Promise<PrepareOutcome> {
    // Outside the nonce lock, concurrently with other prepares: the row lookup and the simulation
    // need no nonce. An existing row makes the estimate moot.
    // When no batch is running or queued (one settlement at a time), the nonce-lock reads start
    // now too, so a lone settlement costs one round trip, not two. They are used only if no batch
    // finished meanwhile (#epoch): a read older than a commit could miss that commit's nonces.
    let early: Queued['early'];
    if (this.#recording === 0 && this.#recorder.pending === 0) {
      const reads = this.#lockReads();
      reads.catch(() => undefined);
      early = { epoch: this.#epoch, reads };
    }
    const [existing, estimated] = await Promise.all([
      findSettlement(this.#db, this.#chain.chainId, plan.orderId, plan.kind),
      plan.estimate(this.#account.address).then(
        (gas) => ({ gas }),
        (err: unknown) => ({ err }),
      ),
    ]);
    if (existing) return { kind: 'existing', record: existing };
    if ('err' in estimated) {
      const refused = refusalOf(estimated.err);
      if (refused) return { kind: 'refused', ...refused };
      throw estimated.err; // an RPC fault, not a refusal: the caller retries later
    }
    const r = await this.#recorder.submit('record', { plan, gas: estimated.gas + (estimated.gas * this.#marginBps) / 10_000n, ...(early ? { early } : {}) });
    if ('err' in r) throw r.err;
    return r.ok;
  }

  /**
   * Step 2 for a batch: one fee read and one nonce read, consecutive nonces, one transaction. An
   * item that records nothing (its order has a row already: a concurrent or earlier prepare won)
   * takes no nonce: the items after it are signed again one nonce lower, so no gap is left. When
   * the transaction fails and the batch has several items, each is recorded alone, so one bad
   * item (a constraint its companion breaks) fails by itself.
   */
  #lockReads(): Promise<LockReads> {
    return Promise.all([
      this.client.estimateFeesPerGas(),
      this.client.getTransactionCount({ address: this.#account.address, blockTag: 'pending' }),
      this.#epochNow().then(async (e) => ({ ...e, ...(await recordedNonces(this.#db, this.#chain.chainId, this.#account.address.toLowerCase(), e.epoch)) })),
    ]);
  }

  /**
   * The chain's genesis (block 0 hash), adopted once per process and again on every reconcile():
   * a chain reset under the same id (a local chain restarted) fails the old chain's unfinished rows
   * and the nonces start over from the new chain's (attempts.ts adoptGenesis).
   */
  #epochNow(refresh = false): Promise<Epoch> {
    if (!this.#epochRead || refresh) {
      const read = (async () => {
        const block0 = await this.client.getBlock({ blockNumber: 0n });
        const genesis = block0.hash!.toLowerCase() as Hex;
        const out = await adoptGenesis(this.#db, this.#chain.chainId, genesis);
        if (out.kind === 'reset') this.#logReset(`new genesis block ${genesis}`, out.failed);
        return { genesis, epoch: out.epoch };
      })();
      // A failed read is not remembered: the next use asks again.
      read.catch(() => {
        if (this.#epochRead === read) this.#epochRead = undefined;
      });
      this.#epochRead = read;
    }
    return this.#epochRead;
  }

  #logReset(why: string, failed: number): void {
    processLog.warn({ chain_id: this.#chain.chainId, why, failed_unfinished: failed }, 'chain reset under the same chain id: executor nonces continue from the chain');
  }

  async #recordBatch(items: Queued[]): Promise<Recorded[]> {
    this.#recording++;
    try {
      return await this.#recordLocked(items);
    } finally {
      this.#recording--;
      this.#epoch++;
    }
  }

  async #recordLocked(items: Queued[]): Promise<Recorded[]> {
    const chainId = this.#chain.chainId;
    const early = items.find((q) => q.early?.epoch === this.#epoch)?.early;
    const [fees, onChainNonce, reads] = (early && (await early.reads.catch(() => undefined))) || (await this.#lockReads());
    let recorded = reads;
    if (onChainNonce <= recorded.confirmed) {
      // The chain lacks a transaction we saw final: its history was replaced under the same genesis
      // (a chain restarted with a fixed genesis). A new epoch; nonces continue from the chain's.
      const why = `the chain's nonce ${onChainNonce} is below our confirmed nonce ${recorded.confirmed}`;
      const out = await resetEpoch(this.#db, chainId, recorded.epoch, recorded.genesis, `chain reset: ${why}`);
      if (out.kind === 'reset') this.#logReset(why, out.failed);
      this.#epochRead = Promise.resolve({ genesis: recorded.genesis, epoch: out.epoch });
      recorded = { ...recorded, epoch: out.epoch, ...(await recordedNonces(this.#db, chainId, this.#account.address.toLowerCase(), out.epoch)) };
    }
    const { epoch } = recorded;
    const first = Math.max(onChainNonce, recorded.last + 1);
    const sign = (q: Queued, nonce: number) =>
      this.#account.signTransaction({
        type: 'eip1559',
        chainId,
        nonce,
        to: q.plan.to ?? this.#contract(),
        data: q.plan.data,
        gas: q.gas,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
    const record = async (batch: Queued[], signed: Hex[]) => {
      const only = batch.length === 1 ? batch[0]! : undefined;
      if (only && !only.plan.also) {
        // One statement (the companion, if any, is in it): no BEGIN/COMMIT round trips.
        const rawTx = signed[0]!;
        return [await insertSettlement(this.#db, { chainId, orderId: only.plan.orderId, kind: only.plan.kind, executor: this.#account.address, nonce: first, rawTx, txHash: keccak256(rawTx), epoch }, only.plan.companion)];
      }
      return this.#db.transaction(async (tx) => {
        const out: (SettlementRecord | undefined)[] = [];
        let skipped = 0;
        for (const [i, q] of batch.entries()) {
          const nonce = first + i - skipped;
          const rawTx = skipped === 0 ? signed[i]! : await sign(q, nonce);
          const rec = await insertSettlement(tx, { chainId, orderId: q.plan.orderId, kind: q.plan.kind, executor: this.#account.address, nonce, rawTx, txHash: keccak256(rawTx), epoch }, q.plan.companion);
          if (rec) await q.plan.also?.(tx, rec);
          else skipped++;
          out.push(rec);
        }
        return out;
      });
    };
    let recs: (SettlementRecord | undefined)[];
    try {
      recs = await record(items, await Promise.all(items.map((q, i) => sign(q, first + i))));
    } catch (err) {
      if (items.length === 1) return [{ err }];
      this.#epoch++;
      const out: Recorded[] = [];
      for (const q of items) out.push(...(await this.#recordLocked([q])));
      return out;
    }
    return Promise.all(
      recs.map(async (rec, i): Promise<Recorded> => {
        if (rec) return { ok: { kind: 'recorded', record: rec } };
        // Another writer recorded this order: never send a second transaction.
        const q = items[i]!;
        const found = await findSettlement(this.#db, chainId, q.plan.orderId, q.plan.kind);
        return found ? { ok: { kind: 'existing', record: found } } : { err: new Error('settlement row vanished') };
      }),
    );
  }

  /** Step 3: broadcast the recorded bytes (idempotent) and mark the row sent. */
  async broadcast(rec: SettlementRecord): Promise<SettlementRecord> {
    await this.#sendRaw(rec);
    return (await this.#marker.submit('sent', rec.id)) ?? (await this.#reload(rec));
  }

  /**
   * Step 3 for a caller that reads the receipt itself (x402 settle answers at inclusion): sends the
   * recorded bytes (idempotent) without waiting for the row's `sent` write. A row still pending is
   * right either way (pending = recorded, maybe sent); checkReceipt and reconcile move it on.
   */
  async send(rec: SettlementRecord): Promise<void> {
    await this.#sendRaw(rec);
    void this.#marker.submit('sent', rec.id).catch(() => undefined);
  }

  async #sendRaw(rec: SettlementRecord): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: rec.rawTx });
    } catch (err) {
      // The same bytes already reached a node (a previous run sent them before dying), or another
      // attempt with this nonce was mined: that is the outcome we wanted, the receipts tell which.
      // Anything else leaves the row pending for the next attempt.
      if (!ALREADY_SENT_RE.test(describeError(err))) throw err;
    }
  }

  /**
   * Step 4: the outcome of the settlement `rec` is an attempt of. Confirmed once `confirmations`
   * deep, failed when it reverted; unchanged while no attempt is mined (or not deep enough), but
   * re-sent, or replaced by a higher-fee attempt once stuck. Returns the attempt that stands for
   * the settlement now (the mined one, else the latest).
   */
  async checkReceipt(rec: SettlementRecord): Promise<SettlementRecord> {
    const attempts = await settlementAttempts(this.#db, rec.chainId, rec.orderId, rec.kind);
    const finished = attempts.find((a) => a.status === 'confirmed' || a.status === 'failed');
    if (finished) return finished;
    const open = attempts.filter((a) => a.status === 'pending' || a.status === 'sent');
    if (open.length === 0) return rec;
    return this.#tracker.track(open, { sendPending: false });
  }

  /** Polls `checkReceipt` until the row is confirmed or failed (or `timeoutMs` passes). */
  async waitFinal(rec: SettlementRecord, opts: { pollMs?: number; timeoutMs?: number } = {}): Promise<SettlementRecord> {
    const until = Date.now() + (opts.timeoutMs ?? 60_000);
    let cur = rec;
    for (;;) {
      cur = await this.checkReceipt(cur);
      if (cur.status === 'confirmed' || cur.status === 'failed' || Date.now() > until) return cur;
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
    }
  }

  /**
   * After a restart, and on every worker tick: broadcasts the latest attempt of every settlement
   * still pending (the process died between recording and sending, or the send failed), reads the
   * receipts of all its attempts, and replaces the stuck ones. Settlements are tracked
   * concurrently (8 at a time). Returns each settlement's standing attempt as it is now; call
   * again until none is left unfinished. The first RPC fault is thrown once every settlement had
   * its turn.
   */
  async reconcile(): Promise<SettlementRecord[]> {
    // First: a reset chain fails the old chain's rows, so they are not sent to the new one.
    await this.#epochNow(true);
    const groups = new Map<string, SettlementRecord[]>();
    for (const rec of await unfinishedSettlements(this.#db, this.#chain.chainId)) {
      const key = `${rec.kind}\u0000${rec.orderId}`;
      groups.set(key, [...(groups.get(key) ?? []), rec]);
    }
    const todo = [...groups.values()].map((g) => g.sort((a, b) => a.attempt - b.attempt));
    const out: SettlementRecord[] = [];
    let failure: { err: unknown } | undefined;
    const worker = async () => {
      for (let g = todo.shift(); g; g = todo.shift()) {
        try {
          out.push(await this.#tracker.track(g, { sendPending: true }));
        } catch (err) {
          failure ??= { err };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, todo.length) }, worker));
    if (failure) throw failure.err;
    return out.sort((a, b) => a.id - b.id);
  }

  async #reload(rec: SettlementRecord): Promise<SettlementRecord> {
    return (await settlementAttempts(this.#db, rec.chainId, rec.orderId, rec.kind)).find((a) => a.id === rec.id) ?? rec;
  }
}
