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

/**
 * Puts a copy of the contract at `from` at address `to` (`anvil_setCode` + its first storage
 * slots, `anvil_setStorageAt`), e.g. a test token at a real chain's token address so a preset can
 * be checked against a local chain of the same id. `storage` overrides slots of the copy (hex
 * slot → 32-byte word); `shortString` encodes a Solidity string of ≤ 31 bytes as its slot word.
 * Immutables stay as compiled into `from`'s code.
 *
 * @example
 * await placeContract(rpcUrl, testUsdc, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', { '0x0': shortString('USD Coin') });
 */
export async function placeContract(rpcUrl: string, from: Hex, to: Hex, storage: Record<string, Hex> = {}, copySlots = 8): Promise<void> {
  const code = await rpcRequest<Hex>(rpcUrl, 'eth_getCode', [from, 'latest']);
  await rpcRequest(rpcUrl, 'anvil_setCode', [to, code]);
  for (let i = 0; i < copySlots; i++) {
    const slot = `0x${i.toString(16)}` as Hex;
    const word = await rpcRequest<Hex>(rpcUrl, 'eth_getStorageAt', [from, slot, 'latest']);
    await rpcRequest(rpcUrl, 'anvil_setStorageAt', [to, `0x${i.toString(16).padStart(64, '0')}`, word]);
  }
  for (const [slot, word] of Object.entries(storage)) {
    await rpcRequest(rpcUrl, 'anvil_setStorageAt', [to, `0x${BigInt(slot).toString(16).padStart(64, '0')}`, word]);
  }
}

/** A Solidity `string` of at most 31 bytes as stored in its slot: the bytes left-aligned, length × 2 in the last byte. */
export function shortString(s: string): Hex {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length > 31) throw new RangeError('shortString: at most 31 bytes');
  const word = Buffer.alloc(32);
  bytes.copy(word);
  word[31] = bytes.length * 2;
  return `0x${word.toString('hex')}`;
}
