// Chain-manipulation helpers for tests, on top of viem's anvil test actions. Each takes the RPC URL
// so a test needs no client plumbing.
import { createTestClient, http, type Hex } from 'viem';
import { rpcRequest } from './rpc.ts';

function testClientFor(rpcUrl: string) {
  return createTestClient({ mode: 'anvil', transport: http(rpcUrl) });
}

/**
 * Mines `blocks` empty-or-pending blocks at once (`anvil_mine`).
 *
 * @example
 * await mine(chain.rpcUrl, 2); // e.g. to reach 3 confirmations
 */
export async function mine(rpcUrl: string, blocks: number): Promise<void> {
  await testClientFor(rpcUrl).mine({ blocks });
}

/**
 * A transaction anvil_reorg includes in the replacement blocks: a signed raw transaction, or a
 * transaction request object (anvil signs it for a dev account), with the offset of the new block
 * that gets it (0 = the first replaced block).
 */
export type ReorgReplay = readonly [tx: Hex | Record<string, unknown>, blockOffset: number];

/**
 * Replaces the last `depth` blocks with new blocks of the same heights but different hashes
 * (`anvil_reorg`). Transactions in the replaced blocks are dropped, not returned to the mempool,
 * unless listed in `replay`.
 *
 * Anvil's parameter shape is positional: `[depth, [[tx, blockOffset], …]]`; an object
 * `{ depth, txBlockPairs }` is rejected ("invalid type: map, expected u64"), and so is `[depth]`
 * alone ("expected struct ReorgOptions with 2 elements").
 *
 * @example
 * const hash = await transferToken({ … });   // mined in block N
 * await reorg(chain.rpcUrl, 1);             // block N replaced by an empty one: transfer gone
 */
export async function reorg(rpcUrl: string, depth: number, replay: readonly ReorgReplay[] = []): Promise<void> {
  if (!Number.isInteger(depth) || depth < 1) throw new Error(`reorg: depth must be a positive integer, got ${depth}`);
  await rpcRequest(rpcUrl, 'anvil_reorg', [depth, replay]);
}

/**
 * Switches to interval mining: a block every `seconds` (0 turns interval mining off). This also
 * turns automine off.
 *
 * @example
 * await setIntervalMining(chain.rpcUrl, 1);
 */
export async function setIntervalMining(rpcUrl: string, seconds: number): Promise<void> {
  await testClientFor(rpcUrl).setIntervalMining({ interval: seconds });
}

/**
 * Turns automine (one block per transaction, mined on submission) on or off.
 *
 * @example
 * await setAutomine(chain.rpcUrl, false); // transactions wait in the mempool until mine()
 */
export async function setAutomine(rpcUrl: string, enabled: boolean): Promise<void> {
  await testClientFor(rpcUrl).setAutomine(enabled);
}
