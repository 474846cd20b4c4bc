import { NO_CALLBACK_DATA, orderIdToBytes32, TollgateSettlementArtifact, type SettlementCallbackData } from '@tollgate/contracts';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  encodeFunctionData,
  http,
  keccak256,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ChainConfig, SettlementSigner } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { describeError } from '../chain/evm/rpc.ts';
import {
  findSettlement,
  insertSettlement,
  lastRecordedNonce,
  setSettlementStatus,
  unfinishedSettlements,
  type CompanionInsert,
  type SettlementKind,
  type SettlementRecord,
} from './repo.ts';

/**
 * The DELEGATE executor of one chain: turns "settle order X" into exactly one on-chain
 * `TollgateSettlement.settle` transaction, crash-safe.
 *
 * Order of effects (the crash-safety argument):
 *   1. simulate + estimate gas (nothing recorded, nothing sent: a refusal changes nothing);
 *   2. sign locally with the next nonce and INSERT the row (status pending) with the raw bytes;
 *   3. broadcast those bytes, then mark the row sent;
 *   4. read the receipt; confirmed at `confirmations` depth, failed when reverted.
 * A process killed after 2 finds the row on restart and broadcasts the same bytes (same hash,
 * same nonce: a node takes them at most once); killed after 3, it finds the receipt. A second
 * attempt for the same order finds the row (UNIQUE per order) and sends nothing; and if the
 * database were lost, the contract refuses the order a second time (`OrderAlreadyProcessed`).
 *
 * One executor instance per chain and key at a time (the caller holds the chain's lease): the
 * nonce is allocated under an in-process lock, from max(chain pending nonce, last recorded + 1).
 */

export interface SettleRequest {
  /** The gateway's order id (`ord_…`); keccak256 of it is the on-chain order id. */
  orderId: string;
  payer: Hex;
  token: Hex;
  amount: bigint;
  /** Merchant wallet (plain transfer), or the callback adapter. */
  payee: Hex;
  /** `payee` is a callback adapter to call (default false: a plain payout). */
  callback?: boolean;
  /** The payer-signed calldata (callback orders with `callback_calldata`); default none. */
  cb?: SettlementCallbackData;
  /** Where the funds are: already in the pool (default), or pulled against the payer's allowance in the same call. */
  source?: 'pool' | 'allowance';
}

export type PrepareOutcome =
  | { kind: 'recorded'; record: SettlementRecord }
  /** A row for this order exists already: nothing new was signed. */
  | { kind: 'existing'; record: SettlementRecord }
  /** The simulation reverted: nothing was recorded or sent. `error` is the contract's custom error name when known. */
  | { kind: 'refused'; error: string };

/** One executor call, before it is signed. */
export interface Plan {
  kind: SettlementKind;
  /** The row key (`settlements.order_id`): the order id, or the x402 claim id. */
  orderId: string;
  /** The contract called; the chain's settlement contract when absent. */
  to?: Hex;
  data: Hex;
  /**
   * Written in the same statement as the row (x402: the authorization's claim), so both exist or
   * neither does; when it exists already, nothing is recorded (the outcome is `existing`).
   */
  companion?: CompanionInsert;
  /** Gas estimate of the call from `account`; throws the decoded revert when it would fail. */
  estimate(account: Hex): Promise<bigint>;
}

export interface ExecutorOptions {
  db: Database;
  chain: ChainConfig;
  signer: SettlementSigner;
  /** Added to the gas estimate, in basis points (default 2,500 = +25 %): state can change between estimate and inclusion. */
  gasMarginBps?: number;
  /** RPC timeout per request in ms (default 10,000). */
  timeoutMs?: number;
}

/** Node answers meaning "these exact bytes are already in the pool or mined". */
const ALREADY_SENT_RE = /already known|known transaction|nonce too low|transaction already imported|already exists/i;

export class SettlementExecutor {
  readonly client: PublicClient;
  readonly #account: PrivateKeyAccount;
  readonly #db: Database;
  readonly #chain: ChainConfig;
  readonly #marginBps: bigint;
  #lock: Promise<unknown> = Promise.resolve();

  constructor(opts: ExecutorOptions) {
    // A chain without a settlement contract still has an executor for calls to other contracts
    // (x402 settlements call the token itself); settle/refund refuse there (#contract).
    this.#chain = opts.chain;
    this.#db = opts.db;
    this.#account = privateKeyToAccount(opts.signer.privateKey());
    this.#marginBps = BigInt(opts.gasMarginBps ?? 2_500);
    this.client = createPublicClient({ transport: http(opts.chain.rpcUrl, { timeout: opts.timeoutMs ?? 10_000, retryCount: 0 }) });
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
  prepare(req: SettleRequest): Promise<PrepareOutcome> {
    const abi = TollgateSettlementArtifact.abi;
    const args = [
      { orderId: orderIdToBytes32(req.orderId), payer: req.payer, token: req.token, amount: req.amount, payee: req.payee, callback: req.callback === true },
      req.cb ?? NO_CALLBACK_DATA,
    ] as const;
    const functionName = req.source === 'allowance' ? 'settleFromAllowance' : 'settle';
    return this.#serialized({
      kind: 'settle',
      orderId: req.orderId,
      data: encodeFunctionData({ abi, functionName, args }),
      estimate: (account) => this.client.estimateContractGas({ address: this.#contract(), abi, functionName, args, account }),
    });
  }

  /**
   * Steps 1–2 of a refund of an unsettled order's pooled funds to its payer (the contract marks
   * the order Refunded: it can never settle afterwards). Broadcast and confirm like a settlement.
   */
  prepareRefund(req: Omit<SettleRequest, 'payee'>): Promise<PrepareOutcome> {
    const abi = TollgateSettlementArtifact.abi;
    const args = [orderIdToBytes32(req.orderId), req.payer, req.token, req.amount] as const;
    return this.#serialized({
      kind: 'refund',
      orderId: req.orderId,
      data: encodeFunctionData({ abi, functionName: 'refund', args }),
      estimate: (account) => this.client.estimateContractGas({ address: this.#contract(), abi, functionName: 'refund', args, account }),
    });
  }

  /**
   * Steps 1–2 of any other call of the executor key (`plan.to`, e.g. an EIP-3009
   * `transferWithAuthorization` on a token for x402): same simulate → sign → record path, one row
   * per (chain, `plan.orderId`, `plan.kind`). Broadcast and confirm like a settlement.
   */
  prepareCall(plan: Plan & { to: Hex }): Promise<PrepareOutcome> {
    return this.#serialized(plan);
  }

  #contract(): Hex {
    const c = this.#chain.settlementContract;
    if (!c) throw new Error(`chain ${this.#chain.chainId} has no settlement contract`);
    return c;
  }

  #serialized(plan: Plan): Promise<PrepareOutcome> {
    // Serialized: two concurrent prepares must not take the same nonce.
    const run = this.#lock.then(() => this.#prepare(plan));
    this.#lock = run.catch(() => undefined);
    return run;
  }

  async #prepare(plan: Plan): Promise<PrepareOutcome> {
    const chainId = this.#chain.chainId;
    // The five reads are independent: asked together, a prepare (held under the nonce lock)
    // costs one round trip instead of five; an existing row makes the others moot.
    const reads = await Promise.allSettled([
      findSettlement(this.#db, chainId, plan.orderId, plan.kind),
      plan.estimate(this.#account.address).then(
        (gas) => ({ gas }),
        (err: unknown) => ({ err }),
      ),
      this.client.estimateFeesPerGas(),
      this.client.getTransactionCount({ address: this.#account.address, blockTag: 'pending' }),
      lastRecordedNonce(this.#db, chainId, this.#account.address.toLowerCase()),
    ] as const);
    const existing = settled(reads[0]);
    if (existing) return { kind: 'existing', record: existing };
    const [estimated, fees, onChainNonce, lastNonce] = [settled(reads[1]), settled(reads[2]), settled(reads[3]), settled(reads[4])];
    if ('err' in estimated) {
      const name = revertName(estimated.err);
      if (name) return { kind: 'refused', error: name };
      throw estimated.err; // an RPC fault, not a refusal: the caller retries later
    }
    const gas = estimated.gas + (estimated.gas * this.#marginBps) / 10_000n;
    const nonce = Math.max(onChainNonce, lastNonce + 1);
    const rawTx = await this.#account.signTransaction({
      type: 'eip1559',
      chainId,
      nonce,
      to: plan.to ?? this.#contract(),
      data: plan.data,
      gas,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const record = await insertSettlement(this.#db, { chainId, orderId: plan.orderId, kind: plan.kind, executor: this.#account.address, nonce, rawTx, txHash: keccak256(rawTx) }, plan.companion);
    if (record) return { kind: 'recorded', record };
    // Another writer recorded this order between our read and insert: never send a second transaction.
    return { kind: 'existing', record: (await findSettlement(this.#db, chainId, plan.orderId, plan.kind))! };
  }

  /** Step 3: broadcast the recorded bytes (idempotent) and mark the row sent. */
  async broadcast(rec: SettlementRecord): Promise<SettlementRecord> {
    await this.#sendRaw(rec);
    return (await setSettlementStatus(this.#db, rec.id, ['pending'], 'sent')) ?? (await this.#reload(rec));
  }

  /**
   * Step 3 for a caller that reads the receipt itself (x402 settle answers at inclusion): sends the
   * recorded bytes (idempotent) without waiting for the row's `sent` write. A row still pending is
   * right either way (pending = recorded, maybe sent); checkReceipt and reconcile move it on.
   */
  async send(rec: SettlementRecord): Promise<void> {
    await this.#sendRaw(rec);
    void setSettlementStatus(this.#db, rec.id, ['pending'], 'sent').catch(() => undefined);
  }

  async #sendRaw(rec: SettlementRecord): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: rec.rawTx });
    } catch (err) {
      // The same bytes already reached a node (a previous run sent them before dying): that is the
      // outcome we wanted. Anything else leaves the row pending for the next attempt.
      if (!ALREADY_SENT_RE.test(describeError(err))) throw err;
    }
  }

  /**
   * Step 4: the receipt of a sent row. Confirmed once `confirmations` deep, failed when it
   * reverted; unchanged while it is not mined (or not deep enough).
   */
  async checkReceipt(rec: SettlementRecord): Promise<SettlementRecord> {
    const receipt = await this.#receipt(rec.txHash);
    if (!receipt) return this.#checkReplaced(rec);
    const blockNumber = Number(receipt.blockNumber);
    if (receipt.status === 'reverted') {
      return (await setSettlementStatus(this.#db, rec.id, ['pending', 'sent'], 'failed', { blockNumber, failureReason: 'reverted on chain' })) ?? (await this.#reload(rec));
    }
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n < BigInt(Math.max(1, this.#chain.confirmations))) return rec;
    return (await setSettlementStatus(this.#db, rec.id, ['pending', 'sent'], 'confirmed', { blockNumber })) ?? (await this.#reload(rec));
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
   * After a restart: re-broadcasts every pending row (the process died between recording and
   * sending, or the send failed) and checks the receipt of every sent row. Returns the rows as
   * they are now; call again until none is left unfinished.
   */
  async reconcile(): Promise<SettlementRecord[]> {
    const out: SettlementRecord[] = [];
    for (const rec of await unfinishedSettlements(this.#db, this.#chain.chainId)) {
      const sent = rec.status === 'pending' ? await this.broadcast(rec) : rec;
      out.push(await this.checkReceipt(sent));
    }
    return out;
  }

  /**
   * A row without a receipt whose nonce the chain has already used for another transaction (a
   * second executor instance on a lost or different database signed the same nonce) can never be
   * mined: it is failed, not waited on forever. The receipt is read once more first, in case the
   * row's own transaction was mined between the two reads.
   */
  async #checkReplaced(rec: SettlementRecord): Promise<SettlementRecord> {
    const used = await this.client.getTransactionCount({ address: this.#account.address, blockTag: 'latest' });
    if (used <= rec.nonce) {
      // Not mined and its nonce still free: it is in a mempool, or it was dropped (a reorg removed
      // its block, a node restarted). Sending the same bytes again is harmless in the first case
      // ("already known") and puts it back in the second; same bytes, same nonce, at most once.
      if (rec.status === 'sent') await this.#resend(rec);
      return rec;
    }
    // An RPC fault here throws (the row stays as it is): only a definite "no receipt" fails it.
    if (await this.#receipt(rec.txHash)) return this.checkReceipt(rec);
    const reason = 'nonce used by another transaction';
    return (await setSettlementStatus(this.#db, rec.id, ['pending', 'sent'], 'failed', { failureReason: reason })) ?? (await this.#reload(rec));
  }

  async #resend(rec: SettlementRecord): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: rec.rawTx });
    } catch (err) {
      if (!ALREADY_SENT_RE.test(describeError(err))) throw err;
    }
  }

  /** The receipt, or undefined when the node has none; RPC faults throw. */
  #receipt(hash: Hex) {
    return this.client.getTransactionReceipt({ hash }).catch((err: unknown) => {
      if (err instanceof BaseError && err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    });
  }

  async #reload(rec: SettlementRecord): Promise<SettlementRecord> {
    return (await findSettlement(this.#db, rec.chainId, rec.orderId, rec.kind)) ?? rec;
  }
}

/** The custom error name of a simulated revert (`OrderAlreadyProcessed`, `InsufficientPool` …), if it is one. */
function revertName(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName ?? reverted.reason ?? 'reverted';
  return undefined;
}

/** The value of a settled read, or its error thrown. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}
