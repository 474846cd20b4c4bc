import type { ChainConfig } from '../config/schema.ts';
import type { EvmSigner } from '../signers/port.ts';
import type { Database } from '../db/database.ts';
import { SettlementExecutor } from './executor.ts';

/**
 * One executor per (database, chain, key) in a process. The executor allocates nonces under an
 * in-process lock; two instances for the same key would pick the same nonce and one of them would
 * fail on the UNIQUE (chain, executor, nonce) row. Every user of the executor key in a process
 * (x402 settle, the DELEGATE worker) takes its executor from here.
 */
const byDb = new WeakMap<Database, Map<string, SettlementExecutor>>();

export function sharedExecutor(db: Database, chain: ChainConfig, signer: EvmSigner): SettlementExecutor {
  let map = byDb.get(db);
  if (!map) byDb.set(db, (map = new Map()));
  const key = `${chain.chainId}:${signer.executorAddress.toLowerCase()}:${chain.rpcUrl}:${chain.settlementContract ?? ''}`;
  let ex = map.get(key);
  // Rows count as confirmed at the chain's finality depth: DELEGATE moves orders to INVOICED on
  // it; x402 answers at inclusion and does not wait for it.
  if (!ex) map.set(key, (ex = new SettlementExecutor({ db, chain: { ...chain, confirmations: Math.max(1, chain.finalityConfirmations) }, signer })));
  return ex;
}
