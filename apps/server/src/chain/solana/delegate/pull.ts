/**
 * The settlement transaction of a SOL_APPROVE_XFER order, signed by the gateway's delegate key:
 * ONE transaction, so everything in it happens together or not at all —
 *  1. create the merchant's associated token account when it does not exist (idempotent; the
 *     delegate pays the rent, as the EVM executor pays gas);
 *  2. `transferChecked` of exactly the order amount from the payer's token account to the
 *     merchant's, with the delegate as authority (the payer's `approveChecked` allows it), carrying
 *     the order's reference key like a SOL_DIRECT payment;
 *  3. a Memo instruction `tollgate:settle:<order_id>` — the callback-equivalent: what an EVM
 *     DELEGATE settlement passes to the merchant's callback contract, here recorded in the same
 *     atomic transaction for the merchant's indexer (docs/solana.md explains the differences).
 * The transaction is returned signed, with its signature and the last block height at which its
 * blockhash is valid: the worker records all of it before sending (record-before-send), re-sends the
 * same bytes after a crash, and builds a new one only once the old one can no longer land.
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
} from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import type { SolanaChainConfig } from '../../../config/schema.ts';
import type { SolanaDelegateKey } from '../../../config/secrets.ts';
import { referenceOf } from '../reference.ts';
import type { SolanaRpc } from '../rpc.ts';

/** SPL Memo program (v2). */
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;

/** The memo of a settlement: names the order, so the merchant's indexer ties the transfer to it. */
export const settlementMemo = (orderId: string) => `tollgate:settle:${orderId}`;

export interface PullOrder {
  id: string;
  from_address: string;
  token_contract: string;
  amount_wei: string;
  /** the merchant's wallet for the mint (its associated token account is credited) */
  wallet: string;
}

export interface SignedPull {
  signature: string;
  /** base64 wire transaction, signed */
  wire: string;
  lastValidBlockHeight: bigint;
}

export async function buildPull(rpc: SolanaRpc, chain: SolanaChainConfig, key: SolanaDelegateKey, o: PullOrder): Promise<SignedPull> {
  const t = chain.tokens.find((x) => x.mint === o.token_contract);
  if (!t) throw new Error(`mint ${o.token_contract} is not configured on chain ${chain.chainId}`);
  const mint = t.mint as Address;
  const tokenProgram = t.programId as Address;
  const delegate = await createKeyPairSignerFromPrivateKeyBytes(key.privateKey());
  const [[source], [destination]] = await Promise.all([findAssociatedTokenPda({ owner: o.from_address as Address, mint, tokenProgram }), findAssociatedTokenPda({ owner: o.wallet as Address, mint, tokenProgram })]);
  const ixs: Instruction[] = [];
  const { value: existing } = await rpc.getAccountInfo(destination, { commitment: 'confirmed', encoding: 'base64', dataSlice: { offset: 0, length: 0 } }).send();
  if (!existing) ixs.push(getCreateAssociatedTokenIdempotentInstruction({ payer: delegate, ata: destination, owner: o.wallet as Address, mint, tokenProgram }));
  const transfer = getTransferCheckedInstruction({ source, mint, destination, authority: delegate, amount: BigInt(o.amount_wei), decimals: t.decimals }, { programAddress: tokenProgram });
  ixs.push({ ...transfer, accounts: [...transfer.accounts, { address: referenceOf(o.id) as Address, role: AccountRole.READONLY }] });
  ixs.push({ programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode(settlementMemo(o.id)) });
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(delegate, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return { signature: getSignatureFromTransaction(signed), wire: getBase64EncodedWireTransaction(signed), lastValidBlockHeight: blockhash.lastValidBlockHeight };
}
