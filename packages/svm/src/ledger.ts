/**
 * The local SVM's chain model over one in-process LiteSVM: slots that advance on a timer,
 * commitment levels derived from slot lag (processed → confirmed → finalized), a transaction
 * history with what a real node's getTransaction reports (balances and token balances before and
 * after), an address → signatures index, and fault hooks that drop or delay transactions.
 * LiteSVM executes synchronously, so the snapshot around one execution is exact.
 */
import { LiteSVM, FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import { getBase58Decoder, getCompiledTransactionMessageDecoder, getTransactionDecoder, lamports, type Address, type Transaction } from '@solana/kit';
import { isTokenProgram, readMintDecimals, readTokenAccount } from './codec.ts';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface TokenBalance {
  accountIndex: number;
  mint: Address;
  owner: Address;
  programId: Address;
  amount: bigint;
  decimals: number;
}

interface CompiledIx {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

export interface TxRecord {
  signature: string;
  slot: bigint;
  blockTime: number;
  /** LiteSVM's error, stringified; null on success */
  err: unknown;
  fee: bigint;
  logs: string[];
  computeUnits: bigint;
  accountKeys: Address[];
  header: { numSignerAccounts: number; numReadonlySignerAccounts: number; numReadonlyNonSignerAccounts: number };
  recentBlockhash: string;
  signatures: string[];
  instructions: CompiledIx[];
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  /** wire bytes, for base64 encoding */
  wire: Uint8Array;
}

export interface LedgerOptions {
  /** ms per slot; 0 = slots advance only through advance() */
  slotMs?: number;
  /** slots between processed and confirmed (1 on mainnet in practice) */
  confirmLag?: number;
  /** slots between processed and finalized (~32 on mainnet) */
  finalizeLag?: number;
}

type Fault = { kind: 'drop' } | { kind: 'delay'; ms: number };

const b58 = getBase58Decoder();
const txDecoder = getTransactionDecoder();
const msgDecoder = getCompiledTransactionMessageDecoder();
/** Lamports per signature, the cluster's base fee (LiteSVM charges the same). */
const FEE_PER_SIGNATURE = 5000n;

export class Ledger {
  readonly svm: LiteSVM;
  slot = 1n;
  readonly confirmLag: bigint;
  readonly finalizeLag: bigint;
  readonly #txs = new Map<string, TxRecord>();
  /** address → signatures, oldest first (getSignaturesForAddress walks it backwards) */
  readonly #byAddress = new Map<string, string[]>();
  /** signatures accepted but never executed (dropped) or not executed yet (delayed) */
  readonly #faults: Fault[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  #ticker: NodeJS.Timeout | undefined;
  /** airdrops: signature → slot (a status, no transaction body) */
  readonly #airdrops = new Map<string, bigint>();

  constructor(opts: LedgerOptions = {}) {
    this.svm = new LiteSVM();
    this.confirmLag = BigInt(opts.confirmLag ?? 1);
    this.finalizeLag = BigInt(Math.max(opts.finalizeLag ?? 8, opts.confirmLag ?? 1));
    this.svm.warpToSlot(this.slot);
    const slotMs = opts.slotMs ?? 100;
    if (slotMs > 0) {
      this.#ticker = setInterval(() => this.advance(1), slotMs);
      this.#ticker.unref();
    }
  }

  /** Moves the chain forward n slots (the clock sysvar follows). */
  advance(n = 1): void {
    this.slot += BigInt(n);
    this.svm.warpToSlot(this.slot);
  }

  /** Highest slot seen at a commitment level. */
  slotAt(commitment: Commitment = 'finalized'): bigint {
    const lag = commitment === 'processed' ? 0n : commitment === 'confirmed' ? this.confirmLag : this.finalizeLag;
    const s = this.slot - lag;
    return s < 0n ? 0n : s;
  }

  statusOf(slot: bigint): Commitment {
    if (slot <= this.slotAt('finalized')) return 'finalized';
    if (slot <= this.slotAt('confirmed')) return 'confirmed';
    return 'processed';
  }

  /** True when the level `have` is at least `want`. */
  static reaches(have: Commitment, want: Commitment): boolean {
    const order: Commitment[] = ['processed', 'confirmed', 'finalized'];
    return order.indexOf(have) >= order.indexOf(want);
  }

  /** The next `n` transactions sent are accepted (signature returned) and never executed. */
  dropNext(n = 1): void {
    for (let i = 0; i < n; i++) this.#faults.push({ kind: 'drop' });
  }

  /** The next `n` transactions sent are executed only after `ms`. */
  delayNext(ms: number, n = 1): void {
    for (let i = 0; i < n; i++) this.#faults.push({ kind: 'delay', ms });
  }

  stop(): void {
    if (this.#ticker) clearInterval(this.#ticker);
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  decode(wire: Uint8Array): Transaction {
    return txDecoder.decode(wire);
  }

  /**
   * Accepts a signed transaction the way a node's sendTransaction does after preflight: returns its
   * signature. Execution errors of a transaction that passed preflight land on chain with `err`.
   */
  submit(wire: Uint8Array): string {
    const tx = this.decode(wire);
    const signature = firstSignature(tx);
    const fault = this.#faults.shift();
    if (fault?.kind === 'drop') return signature;
    if (fault?.kind === 'delay') {
      const t = setTimeout(() => {
        this.#timers.delete(t);
        if (!this.#txs.has(signature)) this.execute(tx, wire);
      }, fault.ms);
      this.#timers.add(t);
      return signature;
    }
    this.execute(tx, wire);
    return signature;
  }

  /** Runs a transaction without keeping its effects. */
  simulate(wire: Uint8Array): { err: unknown; logs: string[]; unitsConsumed: bigint } {
    const tx = this.decode(wire);
    const r = this.svm.simulateTransaction(tx);
    if (r instanceof FailedTransactionMetadata) {
      return { err: errorJson(r.err()), logs: r.meta().logs(), unitsConsumed: r.meta().computeUnitsConsumed() };
    }
    return { err: null, logs: r.meta().logs(), unitsConsumed: r.meta().computeUnitsConsumed() };
  }

  execute(tx: Transaction, wire: Uint8Array): TxRecord | undefined {
    const msg = msgDecoder.decode(tx.messageBytes);
    const keys = msg.staticAccounts as Address[];
    const signature = firstSignature(tx);
    const preBalances = keys.map((k) => this.lamportsOf(k));
    const preTokenBalances = this.tokenBalances(keys);
    const result = this.svm.sendTransaction(tx);
    let meta: TransactionMetadata;
    let err: unknown = null;
    if (result instanceof FailedTransactionMetadata) {
      meta = result.meta();
      err = errorJson(result.err());
      // Errors before execution (bad signature, unknown blockhash, already processed) never land.
      if (
        postBalancesUnchanged(
          preBalances,
          keys.map((k) => this.lamportsOf(k)),
        )
      )
        return undefined;
    } else {
      meta = result;
    }
    const record: TxRecord = {
      signature,
      slot: this.slot,
      blockTime: Math.floor(Date.now() / 1000),
      err,
      fee: FEE_PER_SIGNATURE * BigInt(msg.header.numSignerAccounts),
      logs: meta.logs(),
      computeUnits: meta.computeUnitsConsumed(),
      accountKeys: keys,
      header: msg.header,
      recentBlockhash: msg.lifetimeToken,
      signatures: Object.values(tx.signatures).map((s) => (s ? b58.decode(s) : '1'.repeat(64))),
      instructions: ('instructions' in msg ? msg.instructions : []).map((ix) => ({
        programIdIndex: ix.programAddressIndex,
        accounts: [...(ix.accountIndices ?? [])],
        data: Uint8Array.from(ix.data ?? []),
      })),
      preBalances,
      postBalances: keys.map((k) => this.lamportsOf(k)),
      preTokenBalances,
      postTokenBalances: this.tokenBalances(keys),
      wire,
    };
    this.#txs.set(signature, record);
    for (const k of new Set(keys)) {
      let list = this.#byAddress.get(k);
      if (!list) this.#byAddress.set(k, (list = []));
      list.push(signature);
    }
    return record;
  }

  airdrop(to: Address, amount: bigint): string {
    const r = this.svm.airdrop(to, lamports(amount));
    if (!r || r instanceof FailedTransactionMetadata) throw new Error(`airdrop failed: ${r ? String(errorJson(r.err())) : 'no result'}`);
    const sig = b58.decode(r.signature());
    this.#airdrops.set(sig, this.slot);
    return sig;
  }

  transaction(signature: string): TxRecord | undefined {
    return this.#txs.get(signature);
  }

  /** Slot and error of a known signature (transactions and airdrops). */
  status(signature: string): { slot: bigint; err: unknown } | undefined {
    const tx = this.#txs.get(signature);
    if (tx) return { slot: tx.slot, err: tx.err };
    const a = this.#airdrops.get(signature);
    return a === undefined ? undefined : { slot: a, err: null };
  }

  /**
   * Signatures touching `address`, newest first, at or above `commitment`, as the RPC pages them:
   * strictly older than `before`, stopping at (excluding) `until`, at most `limit`.
   */
  signaturesFor(address: string, opts: { limit: number; before?: string; until?: string; commitment: Commitment }): TxRecord[] {
    const list = this.#byAddress.get(address) ?? [];
    const out: TxRecord[] = [];
    let i = list.length - 1;
    if (opts.before) {
      const at = list.lastIndexOf(opts.before);
      if (at < 0) return [];
      i = at - 1;
    }
    const maxSlot = this.slotAt(opts.commitment);
    for (; i >= 0 && out.length < opts.limit; i--) {
      const sig = list[i]!;
      if (sig === opts.until) break;
      const tx = this.#txs.get(sig)!;
      if (tx.slot > maxSlot) continue;
      out.push(tx);
    }
    return out;
  }

  lamportsOf(address: Address): bigint {
    return this.svm.getBalance(address) ?? 0n;
  }

  /** Token balances of the token accounts among `keys`, as getTransaction's meta reports them. */
  tokenBalances(keys: Address[]): TokenBalance[] {
    const out: TokenBalance[] = [];
    keys.forEach((k, accountIndex) => {
      const acc = this.svm.getAccount(k);
      if (!acc.exists || !isTokenProgram(acc.programAddress)) return;
      const state = readTokenAccount(acc.data);
      if (!state) return;
      const decimals = this.decimalsOf(state.mint);
      if (decimals === undefined) return;
      out.push({ accountIndex, mint: state.mint, owner: state.owner, programId: acc.programAddress, amount: state.amount, decimals });
    });
    return out;
  }

  decimalsOf(mint: Address): number | undefined {
    const m = this.svm.getAccount(mint);
    return m.exists ? readMintDecimals(m.data) : undefined;
  }
}

function firstSignature(tx: Transaction): string {
  const first = Object.values(tx.signatures)[0];
  if (!first) throw new Error('transaction is not signed by its fee payer');
  return b58.decode(first);
}

function postBalancesUnchanged(pre: bigint[], post: bigint[]): boolean {
  return pre.every((v, i) => v === post[i]);
}

const TX_ERRORS =
  'AccountInUse AccountLoadedTwice AccountNotFound ProgramAccountNotFound InsufficientFundsForFee InvalidAccountForFee AlreadyProcessed BlockhashNotFound CallChainTooDeep MissingSignatureForFee InvalidAccountIndex SignatureFailure InvalidProgramForExecution SanitizeFailure ClusterMaintenance AccountBorrowOutstanding WouldExceedMaxBlockCostLimit UnsupportedVersion InvalidWritableAccount WouldExceedMaxAccountCostLimit WouldExceedAccountDataBlockLimit TooManyAccountLocks AddressLookupTableNotFound InvalidAddressLookupTableOwner InvalidAddressLookupTableData InvalidAddressLookupTableIndex InvalidRentPayingAccount WouldExceedMaxVoteCostLimit WouldExceedAccountDataTotalLimit MaxLoadedAccountsDataSizeExceeded ResanitizationNeeded InvalidLoadedAccountsDataSizeLimit UnbalancedTransaction ProgramCacheHitMaxLimit CommitCancelled'.split(
    ' ',
  );
const IX_ERRORS =
  'GenericError InvalidArgument InvalidInstructionData InvalidAccountData AccountDataTooSmall InsufficientFunds IncorrectProgramId MissingRequiredSignature AccountAlreadyInitialized UninitializedAccount UnbalancedInstruction ModifiedProgramId ExternalAccountLamportSpend ExternalAccountDataModified ReadonlyLamportChange ReadonlyDataModified DuplicateAccountIndex ExecutableModified RentEpochModified NotEnoughAccountKeys AccountDataSizeChanged AccountNotExecutable AccountBorrowFailed AccountBorrowOutstanding DuplicateAccountOutOfSync InvalidError ExecutableDataModified ExecutableLamportChange ExecutableAccountNotRentExempt UnsupportedProgramId CallDepth MissingAccount ReentrancyNotAllowed MaxSeedLengthExceeded InvalidSeeds InvalidRealloc ComputationalBudgetExceeded PrivilegeEscalation ProgramEnvironmentSetupFailure ProgramFailedToComplete ProgramFailedToCompile Immutable IncorrectAuthority AccountNotRentExempt InvalidAccountOwner ArithmeticOverflow UnsupportedSysvar IllegalOwner MaxAccountsDataAllocationsExceeded MaxAccountsExceeded MaxInstructionTraceLengthExceeded BuiltinProgramsMustConsumeComputeUnits BorshIoError'.split(
    ' ',
  );

/**
 * LiteSVM's error object (numeric const enums, classes) shaped like the RPC's TransactionError
 * JSON: a name for a fieldless error, `{ InstructionError: [index, detail] }` for an instruction's.
 */
function errorJson(e: unknown): unknown {
  if (typeof e === 'number') return TX_ERRORS[e] ?? `TransactionError(${e})`;
  const o = e as { index?: number; err?: () => unknown; accountIndex?: number };
  if (o && typeof o.err === 'function' && typeof o.index === 'number') {
    const inner = o.err();
    if (typeof inner === 'number') return { InstructionError: [o.index, IX_ERRORS[inner] ?? `InstructionError(${inner})`] };
    const code = (inner as { code?: number }).code;
    return { InstructionError: [o.index, code !== undefined ? { Custom: code } : String(inner)] };
  }
  if (o && typeof o.accountIndex === 'number') return { InsufficientFundsForRent: { account_index: o.accountIndex } };
  return String(e);
}
