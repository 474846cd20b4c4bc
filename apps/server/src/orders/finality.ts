/**
 * When a recorded late or under-payment is final enough to be accepted (orders/accept.ts, the
 * merchant's accept; quickpay/partial.ts, summed short payments). The chain's FAMILY answers, not
 * the EVM chain list (a Solana order is not in it, and would never be final); the rule comes from
 * chain/order-ports.ts (finalityRule, the order service's port):
 *  - block-depth families (EVM): `invoice` blocks under the watcher's hash-checked cursor, read in
 *    the caller's transaction (a reorg below the cursor orphans the transfer before it moves on);
 *  - commitment families (Solana): the node says whether the transaction is `finalized`. That is an
 *    RPC, so it is asked BEFORE the caller's transaction (`askNode`): no row lock, and not PGlite's
 *    only connection, ever waits on a node. A transfer recorded in between is simply not final yet.
 */
import { depthOf } from './states.ts';

export type FinalityRule = { unit: 'blocks'; needed: number } | { unit: 'commitment'; level: 'finalized'; isFinal: (txHash: string) => Promise<boolean> };

export interface Finality {
  final: boolean;
  /** blocks: depth under the watcher's cursor; commitment: 1 once final, else 0 */
  confirmations: number;
  needed: number;
  /** the commitment level awaited, on a commitment family */
  level?: 'finalized';
}

/**
 * The transactions among `txHashes` the node reports final, for a commitment rule (empty for a
 * block rule: decided under the lock). Call it outside any transaction. An RPC error leaves the
 * transaction out (not final now; the caller retries later), never in.
 */
export async function askNode(rule: FinalityRule | undefined, txHashes: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (rule?.unit !== 'commitment') return out;
  for (const h of new Set(txHashes)) {
    if (await rule.isFinal(h).catch(() => false)) out.add(h);
  }
  return out;
}

/** The finality of one recorded transfer (`scanned`: the chain's cursor block, read under the lock). */
export function finalityOf(rule: FinalityRule | undefined, t: { tx_hash: string; block_number: number | string }, scanned: bigint | undefined, nodeFinal: ReadonlySet<string>): Finality {
  if (rule === undefined) return { final: false, confirmations: 0, needed: 0 };
  if (rule.unit === 'commitment') {
    const final = nodeFinal.has(t.tx_hash);
    return { final, confirmations: final ? 1 : 0, needed: 1, level: rule.level };
  }
  const depth = scanned === undefined ? 0 : depthOf(BigInt(t.block_number), scanned);
  return { final: depth >= rule.needed, confirmations: depth, needed: rule.needed };
}
