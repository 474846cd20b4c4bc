/**
 * Payer tooling over the real RPC client (@solana/kit): a Solana Pay style token transfer that
 * carries reference keys, and a wait for a commitment level. Used by the tests, the bench and the
 * dev profile; it talks to any Solana RPC (the local SVM or a real cluster) the same way.
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Commitment,
  type Instruction,
  type KeyPairSigner,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
} from '@solana/kit';
import { findAssociatedTokenPda, getApproveCheckedInstruction, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';

export type SolanaRpc = Rpc<SolanaRpcApi>;

export function rpcClient(url: string): SolanaRpc {
  return createSolanaRpc(url);
}

export async function associatedTokenAddress(owner: Address, mint: Address, tokenProgram: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
  return ata;
}

export interface TransferRequest {
  payer: KeyPairSigner;
  /** the recipient's wallet (its associated token account receives the tokens) */
  recipient: Address;
  mint: Address;
  tokenProgram: Address;
  decimals: number;
  amount: bigint;
  /** Solana Pay references: read-only, non-signer keys appended to the transfer instruction */
  references?: Address[];
  /** create the recipient's associated token account first (idempotent; the payer pays its rent) */
  createRecipientAccount?: boolean;
}

/** The instructions of a Solana Pay transfer request (spec: the reference keys ride on the transfer). */
export async function transferInstructions(req: TransferRequest): Promise<Instruction[]> {
  const source = await associatedTokenAddress(req.payer.address, req.mint, req.tokenProgram);
  const destination = await associatedTokenAddress(req.recipient, req.mint, req.tokenProgram);
  const ixs: Instruction[] = [];
  if (req.createRecipientAccount) {
    ixs.push(getCreateAssociatedTokenIdempotentInstruction({ payer: req.payer, ata: destination, owner: req.recipient, mint: req.mint, tokenProgram: req.tokenProgram }));
  }
  const transfer = getTransferCheckedInstruction({ source, mint: req.mint, destination, authority: req.payer, amount: req.amount, decimals: req.decimals }, { programAddress: req.tokenProgram });
  ixs.push({
    ...transfer,
    accounts: [...transfer.accounts, ...(req.references ?? []).map((address) => ({ address, role: AccountRole.READONLY }))],
  });
  return ixs;
}

/** Signs instructions with a fresh blockhash and sends them; returns the signature. */
export async function sendInstructions(rpc: SolanaRpc, feePayer: KeyPairSigner, ixs: Instruction[], opts: { skipPreflight?: boolean } = {}): Promise<Signature> {
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  const signature = getSignatureFromTransaction(signed);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', skipPreflight: opts.skipPreflight ?? false, preflightCommitment: 'confirmed' }).send();
  return signature;
}

export async function payWithReference(rpc: SolanaRpc, req: TransferRequest): Promise<Signature> {
  return sendInstructions(rpc, req.payer, await transferInstructions(req));
}

/** SOL_APPROVE_XFER: the payer lets `delegate` move up to `amount` from its token account. */
export async function approveDelegate(rpc: SolanaRpc, req: { payer: KeyPairSigner; delegate: Address; mint: Address; tokenProgram: Address; decimals: number; amount: bigint; references?: Address[] }): Promise<Signature> {
  const source = await associatedTokenAddress(req.payer.address, req.mint, req.tokenProgram);
  const ix = getApproveCheckedInstruction({ source, mint: req.mint, delegate: req.delegate, owner: req.payer, amount: req.amount, decimals: req.decimals }, { programAddress: req.tokenProgram });
  const withRefs = { ...ix, accounts: [...ix.accounts, ...(req.references ?? []).map((address) => ({ address, role: AccountRole.READONLY }))] };
  return sendInstructions(rpc, req.payer, [withRefs]);
}

const LEVELS: Commitment[] = ['processed', 'confirmed', 'finalized'];

/** Polls getSignatureStatuses until the signature reaches `commitment`; throws on a failed transaction or timeout. */
export async function waitForSignature(rpc: SolanaRpc, signature: Signature, commitment: Commitment = 'confirmed', timeoutMs = 20_000): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const st = value[0];
    if (st?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(st.err, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
    if (st?.confirmationStatus && LEVELS.indexOf(st.confirmationStatus) >= LEVELS.indexOf(commitment)) return st.slot;
    if (Date.now() > deadline) throw new Error(`transaction ${signature} not ${commitment} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
