/**
 * The transaction of a Solana Pay *transaction request* (https://docs.solanapay.com/spec, "Transaction
 * Request"): the gateway builds the payer's transfer and the wallet only signs and sends it. Used by
 * the hosted checkout page, whose Content-Security-Policy lets it reach no Solana RPC: the page asks
 * Tollgate for the transaction, hands it to the Wallet Standard wallet, and the wallet sends it.
 *
 * The transaction is what a `solana:` transfer request would make a wallet build, so the watcher
 * attributes it the same way (by the order's reference key, never by amount or sender):
 *  - fee payer: the paying account (it signs; the gateway signs nothing);
 *  - a recent blockhash from the configured cluster (a wallet may replace it: the spec allows that
 *    only for a transaction with no other signatures, which is this one);
 *  - when the merchant wallet has no associated token account for the mint yet, a
 *    create-associated-token-account-idempotent paid by the payer (as a wallet does for a transfer
 *    request);
 *  - `transferChecked` of exactly the order amount from the payer's associated token account to the
 *    merchant's, carrying the order's reference key as a read-only, non-signer account.
 * Serialized unsigned (zeroed signature slot), base64: the wire form wallets deserialize.
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import type { SolanaChainConfig } from '../../config/schema.ts';
import { referenceOf } from './reference.ts';
import type { SolanaRpc } from './rpc.ts';

export interface TransferTransactionInput {
  /** the paying wallet (fee payer and transfer authority), base58 */
  account: string;
  order: { id: string; pay_to_address: string; token_contract: string; amount_wei: string };
}

/**
 * A signer stand-in for an address that signs later (the wallet): the instruction builders want a
 * TransactionSigner to mark the account as a signer; it is never asked to sign here.
 */
function signerSlot(address: Address): TransactionSigner {
  return { address, signTransactions: () => Promise.reject(new Error('the wallet signs this transaction, not the gateway')) };
}

/** The instructions of the payer's transfer for `order` (pure apart from the ATA existence check). */
async function transferInstructions(rpc: SolanaRpc, chain: SolanaChainConfig, input: TransferTransactionInput): Promise<Instruction[]> {
  const token = chain.tokens.find((t) => t.mint === input.order.token_contract);
  if (!token) throw new Error(`mint ${input.order.token_contract} is not configured on chain ${chain.chainId}`);
  const mint = token.mint as Address;
  const tokenProgram = token.programId as Address;
  const payer = signerSlot(input.account as Address);
  const merchant = input.order.pay_to_address as Address;
  const [[source], [destination]] = await Promise.all([findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram }), findAssociatedTokenPda({ owner: merchant, mint, tokenProgram })]);
  const ixs: Instruction[] = [];
  const { value: existing } = await rpc.getAccountInfo(destination, { commitment: 'confirmed', encoding: 'base64', dataSlice: { offset: 0, length: 0 } }).send();
  if (!existing) ixs.push(getCreateAssociatedTokenIdempotentInstruction({ payer, ata: destination, owner: merchant, mint, tokenProgram }));
  const transfer = getTransferCheckedInstruction({ source, mint, destination, authority: payer, amount: BigInt(input.order.amount_wei), decimals: token.decimals }, { programAddress: tokenProgram });
  ixs.push({ ...transfer, accounts: [...transfer.accounts, { address: referenceOf(input.order.id) as Address, role: AccountRole.READONLY }] });
  return ixs;
}

/** The base64 wire transaction (unsigned) of the payer's transfer for `order`. */
export async function transferTransaction(rpc: SolanaRpc, chain: SolanaChainConfig, input: TransferTransactionInput): Promise<string> {
  const [ixs, { value: blockhash }] = await Promise.all([transferInstructions(rpc, chain, input), rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()]);
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(input.account as Address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}
