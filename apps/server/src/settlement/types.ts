import type { SettlementCallbackData } from '@tollgate/contracts';
import type { Hex } from 'viem';
import type { ChainConfig } from '../config/schema.ts';
import type { EvmSigner } from '../signers/port.ts';
import type { Database, Queryable } from '../db/database.ts';
import type { CompanionInsert, SettlementKind, SettlementRecord } from './repo.ts';

/** The shapes of the executor's API (settlement/executor.ts). */

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
  | { kind: 'refused'; error: string; detail?: string };

/** Written in the recording transaction, after the row (e.g. the order's `settlement_tx_hash`). */
export type AlsoRecord = (q: Queryable, rec: SettlementRecord) => Promise<void>;

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
  /** Run in the recording transaction when the row was recorded (not when it existed). */
  also?: AlsoRecord;
  /** Gas estimate of the call from `account`; throws the decoded revert when it would fail. */
  estimate(account: Hex): Promise<bigint>;
}

export interface ExecutorOptions {
  db: Database;
  chain: ChainConfig;
  signer: EvmSigner;
  /** Added to the gas estimate, in basis points (default 2,500 = +25 %): state can change between estimate and inclusion. */
  gasMarginBps?: number;
  /** RPC timeout per request in ms (default 10,000). */
  timeoutMs?: number;
  /** Most settlements signed and recorded per commit (default 64). */
  maxBatch?: number;
}
