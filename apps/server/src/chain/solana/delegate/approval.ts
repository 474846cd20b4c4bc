/**
 * SOL_APPROVE_XFER approvals: which transaction approved the gateway's delegate for an order, and
 * whether the payer's token account still grants it. SPL token accounts have ONE delegate and one
 * delegated amount, not an allowance per spender: an approval is attributed to an order by the
 * order's reference key, carried on the payer's `approveChecked` instruction as on a Solana Pay
 * transfer, never by amount or sender alone; the pull then checks the account's live state.
 */
import { getBase58Decoder, getBase58Encoder, type Address, type Signature } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import type { SolanaChainConfig } from '../../../config/schema.ts';
import type { JsonTransaction } from '../decode.ts';
import { referenceOf } from '../reference.ts';
import type { SolanaRpc } from '../rpc.ts';
import { signaturesSince } from '../scan.ts';

const IX_APPROVE_CHECKED = 13;

export interface ApprovalOrder {
  id: string;
  from_address: string;
  token_contract: string;
  amount_wei: string;
}

export interface Approval {
  signature: string;
  slot: bigint;
  /** the payer's token account the delegate may draw from */
  source: string;
  amount: bigint;
}

/** The payer's token account of the order's mint (its associated token account). */
export async function payerTokenAccount(chain: SolanaChainConfig, o: Pick<ApprovalOrder, 'from_address' | 'token_contract'>): Promise<string> {
  const t = chain.tokens.find((x) => x.mint === o.token_contract);
  if (!t) throw new Error(`mint ${o.token_contract} is not configured on chain ${chain.chainId}`);
  const [ata] = await findAssociatedTokenPda({ owner: o.from_address as Address, mint: t.mint as Address, tokenProgram: t.programId as Address });
  return ata;
}

/**
 * The `approveChecked` of one transaction that grants `delegate` at least the order amount on the
 * payer's token account of the order's mint, signed by the payer and carrying the order's
 * reference key (pure).
 */
function approvalIn(tx: JsonTransaction, signature: string, want: { reference: string; source: string; mint: string; delegate: string; owner: string; amount: bigint; programId: string }): Approval | undefined {
  if (!tx.meta || tx.meta.err !== null) return undefined;
  const keys = tx.transaction.message.accountKeys;
  for (const ix of tx.transaction.message.instructions) {
    if (keys[ix.programIdIndex] !== want.programId) continue;
    const data = getBase58Encoder().encode(ix.data);
    if (data[0] !== IX_APPROVE_CHECKED || data.length < 10) continue;
    const [source, mint, delegate, owner, ...rest] = ix.accounts.map((i) => keys[i]);
    const amount = new DataView(data.buffer, data.byteOffset + 1, 8).getBigUint64(0, true);
    if (source === want.source && mint === want.mint && delegate === want.delegate && owner === want.owner && rest.includes(want.reference) && amount >= want.amount) {
      return { signature, slot: tx.slot, source, amount };
    }
  }
  return undefined;
}

/** The newest confirmed approval of order `o` for `delegate`, found through its reference key. */
export async function findApproval(rpc: SolanaRpc, chain: SolanaChainConfig, o: ApprovalOrder, delegate: string): Promise<Approval | undefined> {
  const t = chain.tokens.find((x) => x.mint === o.token_contract);
  if (!t) return undefined;
  const want = { reference: referenceOf(o.id), source: await payerTokenAccount(chain, o), mint: t.mint, delegate, owner: o.from_address, amount: BigInt(o.amount_wei), programId: t.programId };
  const sigs = await signaturesSince(rpc, want.reference, { commitment: 'confirmed', maxPages: 1 });
  for (const s of sigs.reverse()) {
    if (s.err !== null) continue;
    const tx = await rpc.getTransaction(s.signature as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    const a = tx ? approvalIn(tx as unknown as JsonTransaction, s.signature, want) : undefined;
    if (a) return a;
  }
  return undefined;
}

export interface TokenAccountState {
  owner: string;
  amount: bigint;
  delegate: string | undefined;
  delegatedAmount: bigint;
  /** 1 initialized, 2 frozen */
  state: number;
}

/**
 * The base state of an SPL token account (the first 165 bytes, the same in Token and Token-2022):
 * mint 0..32, owner 32..64, amount 64..72, delegate COption 72..108, state 108, is_native
 * COption<u64> 109..121, delegated_amount 121..129. Undefined when the account does not exist.
 */
export async function tokenAccountState(rpc: SolanaRpc, address: string): Promise<TokenAccountState | undefined> {
  const { value } = await rpc.getAccountInfo(address as Address, { commitment: 'confirmed', encoding: 'base64' }).send();
  if (!value) return undefined;
  const data = Buffer.from(value.data[0], 'base64');
  if (data.length < 165) return undefined;
  const b58 = (b: Uint8Array) => getBase58Decoder().decode(b);
  return {
    owner: b58(data.subarray(32, 64)),
    amount: data.readBigUInt64LE(64),
    delegate: data.readUInt32LE(72) === 1 ? b58(data.subarray(76, 108)) : undefined,
    state: data[108]!,
    delegatedAmount: data.readBigUInt64LE(121),
  };
}
