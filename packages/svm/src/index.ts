export { startLocalSvm, LOCAL_GENESIS_HASH, LOCAL_CAIP2, type LocalSvm, type LocalSvmOptions, type LocalToken } from './server.ts';
export { Ledger, type Commitment, type LedgerOptions, type TxRecord } from './ledger.ts';
export { TOKEN_PROGRAM, TOKEN_2022_PROGRAM, ASSOCIATED_TOKEN_PROGRAM, transferFeeOf, type TransferFee } from './codec.ts';
export {
  rpcClient,
  associatedTokenAddress,
  transferInstructions,
  sendInstructions,
  payWithReference,
  approveDelegate,
  waitForSignature,
  type SolanaRpc,
  type TransferRequest,
} from './payer.ts';
