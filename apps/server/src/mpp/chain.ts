import { createPublicClient, type Hex, type PublicClient } from 'viem';
import type { ChainConfig } from '../config/schema.ts';
import { decodeTransferLog, type TransferLog } from '../chain/evm/rpc.ts';
import { chainTransport } from '../chain/evm/transport.ts';

/**
 * What verify needs from a chain: one transaction's receipt (its Transfer logs and block), the
 * block's timestamp and the head, read together. A port so another chain family plugs in beside `evm`.
 */
export interface TxLookup {
  /** undefined: the node does not know the transaction as mined (pending, dropped or never sent). */
  getMinedTransfers(txHash: Hex): Promise<MinedTx | undefined>;
}

export interface MinedTx {
  status: 'success' | 'reverted';
  blockNumber: bigint;
  blockHash: Hex;
  /** Unix seconds of the including block. */
  blockTimestamp: bigint;
  transfers: TransferLog[];
  /** The head block number, read after the receipt (so never below `blockNumber`). */
  head: bigint;
}

/** Block timestamps kept per block hash (a hash names one block forever); enough for minutes of blocks. */
const BLOCK_TIME_CACHE = 1024;

/**
 * The EVM implementation over JSON-RPC (viem, no transport retries: the caller answers 503).
 *
 * Throughput under concurrent verifies (bench/mpp-verify.ts): requests made in the same few
 * milliseconds travel as one JSON-RPC batch (one HTTP round trip for many receipts); a block's
 * timestamp is read once per block hash, not once per transaction (payments cluster in blocks);
 * the head is still read after each receipt, so it is never below the receipt's block, and
 * concurrent head reads share the batch.
 */
export function createEvmTxLookup(chain: Pick<ChainConfig, 'rpcUrl' | 'rpcUrls' | 'chainId'>, timeoutMs = 10_000): TxLookup {
  const client: PublicClient = createPublicClient({ transport: chainTransport(chain, { timeoutMs, batch: { wait: 2, batchSize: 100 } }) });
  const blockTimes = new Map<Hex, bigint>();
  async function blockTime(hash: Hex): Promise<bigint> {
    const known = blockTimes.get(hash);
    if (known !== undefined) return known;
    const t = (await client.getBlock({ blockHash: hash })).timestamp;
    if (blockTimes.size >= BLOCK_TIME_CACHE) blockTimes.delete(blockTimes.keys().next().value!);
    blockTimes.set(hash, t);
    return t;
  }
  return {
    async getMinedTransfers(txHash) {
      let receipt;
      try {
        receipt = await client.getTransactionReceipt({ hash: txHash });
      } catch (err) {
        if ((err as { name?: string }).name === 'TransactionReceiptNotFoundError') return undefined;
        throw err;
      }
      // The block's timestamp (cached per hash) and the head, side by side, after the receipt.
      const [blockTimestamp, head] = await Promise.all([blockTime(receipt.blockHash), client.getBlockNumber({ cacheTime: 0 })]);
      const transfers: TransferLog[] = [];
      for (const l of receipt.logs) {
        const t = decodeTransferLog({
          address: l.address,
          topics: l.topics,
          data: l.data,
          transactionHash: l.transactionHash,
          logIndex: l.logIndex === null ? null : String(l.logIndex),
          blockNumber: l.blockNumber === null ? null : String(l.blockNumber),
          blockHash: l.blockHash,
          removed: l.removed,
        });
        if (t) transfers.push(t);
      }
      return { status: receipt.status, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, blockTimestamp, head, transfers };
    },
  };
}
