/**
 * Token transfers of one transaction (pure), read the way Solana Pay validates a payment: from the
 * `json` encoding (instruction account indices, so the reference keys appended to a transfer are
 * visible; `jsonParsed` hides them) plus the meta's token balances. What the recipient RECEIVED is
 * the destination's balance change, not the instruction's amount: a Token-2022 mint with a transfer
 * fee withholds part of it in the destination account.
 */
import { getBase58Encoder } from '@solana/codecs-strings';

const TOKEN_PROGRAMS = new Set(['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb']);
const IX_TRANSFER = 3;
const IX_TRANSFER_CHECKED = 12;

/** The slice of getTransaction(…, { encoding: 'json' }) this module reads. */
export interface JsonTransaction {
  slot: bigint;
  blockTime: bigint | null;
  transaction: {
    message: {
      accountKeys: readonly string[];
      instructions: readonly { programIdIndex: number; accounts: readonly number[]; data: string }[];
    };
  };
  meta: {
    err: unknown;
    loadedAddresses?: { writable: readonly string[]; readonly: readonly string[] } | undefined;
    preTokenBalances?: readonly TokenBalanceJson[] | null;
    postTokenBalances?: readonly TokenBalanceJson[] | null;
  } | null;
}

interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner?: string | undefined;
  programId?: string | undefined;
  uiTokenAmount: { amount: string };
}

export interface SolanaTransfer {
  signature: string;
  /** index of the top-level instruction: with the signature, the transfer's identity */
  instructionIndex: number;
  slot: bigint;
  blockTime: bigint | null;
  programId: string;
  mint: string;
  source: string;
  /** the token account credited */
  destination: string;
  /** the wallet owning `destination` (from the token balances) */
  destinationOwner: string | undefined;
  authority: string;
  /** the amount the instruction sent */
  amount: bigint;
  /**
   * What `destination` received from this instruction: the balance change when this is the only
   * transfer into it in the transaction; undefined when several transfers credit the same account
   * and a fee makes the split unknowable (never guessed: such a payment is left for review).
   */
  received: bigint | undefined;
  /** keys after the instruction's own accounts: the Solana Pay references it carries */
  references: string[];
}

const b58 = getBase58Encoder();

/** The transfers of a successful transaction; none for a failed one (it moved nothing). */
export function decodeTransfers(signature: string, tx: JsonTransaction): SolanaTransfer[] {
  if (!tx.meta || (tx.meta.err !== null && tx.meta.err !== undefined)) return [];
  const keys = [...tx.transaction.message.accountKeys, ...(tx.meta.loadedAddresses?.writable ?? []), ...(tx.meta.loadedAddresses?.readonly ?? [])];
  const balances = (list: readonly TokenBalanceJson[] | null | undefined) => new Map((list ?? []).map((b) => [b.accountIndex, b]));
  const pre = balances(tx.meta.preTokenBalances);
  const post = balances(tx.meta.postTokenBalances);
  const found: (Omit<SolanaTransfer, 'received'> & { destIndex: number })[] = [];
  tx.transaction.message.instructions.forEach((ix, instructionIndex) => {
    const programId = keys[ix.programIdIndex];
    if (!programId || !TOKEN_PROGRAMS.has(programId)) return;
    let data: Uint8Array;
    try {
      data = Uint8Array.from(b58.encode(ix.data));
    } catch {
      return;
    }
    const kind = data[0];
    if ((kind !== IX_TRANSFER && kind !== IX_TRANSFER_CHECKED) || data.length < 9) return;
    const amount = new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(1, true);
    const acc = ix.accounts.map((i) => keys[i] ?? '');
    const checked = kind === IX_TRANSFER_CHECKED;
    const own = checked ? 4 : 3; // transferChecked: source, mint, destination, authority; transfer: source, destination, authority
    if (acc.length < own) return;
    const destIndex = ix.accounts[checked ? 2 : 1]!;
    const mint = checked ? acc[1]! : (post.get(destIndex)?.mint ?? pre.get(destIndex)?.mint);
    if (!mint) return;
    found.push({
      signature,
      instructionIndex,
      slot: tx.slot,
      blockTime: tx.blockTime,
      programId,
      mint,
      source: acc[0]!,
      destination: acc[checked ? 2 : 1]!,
      destinationOwner: post.get(destIndex)?.owner,
      authority: acc[checked ? 3 : 2]!,
      amount,
      references: acc.slice(own),
      destIndex,
    });
  });
  return found.map(({ destIndex, ...t }) => {
    const into = found.filter((f) => f.destIndex === destIndex);
    const delta = BigInt(post.get(destIndex)?.uiTokenAmount.amount ?? '0') - BigInt(pre.get(destIndex)?.uiTokenAmount.amount ?? '0');
    let received: bigint | undefined;
    if (into.length === 1) received = delta;
    else if (into.reduce((s, f) => s + f.amount, 0n) === delta) received = t.amount; // no fee taken: each got its amount
    return { ...t, received };
  });
}
