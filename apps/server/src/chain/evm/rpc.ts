import { createPublicClient, numberToHex, ResponseBodyTooLargeError, type Hex, type PublicClient } from 'viem';
import type { ChainConfig } from '../../config/schema.ts';
import { logSafeError } from '../../db/log-safe.ts';
import { chainTransport } from './transport.ts';

/**
 * The watcher's view of one EVM chain: three JSON-RPC reads, each bounded by a timeout and retried
 * here with backoff. viem's own transport retry is off (`retryCount: 0`): two retry layers would
 * multiply (viem's default 3 × ours 3 = 9 attempts per call, ~30 s of a dead endpoint per call) and
 * viem's layer cannot tell a "range too large" answer, which must not be retried, from an outage.
 *
 * Every error thrown from here is an ordinary rejected promise: the watcher turns it into a failed
 * tick and backs off; nothing here can crash the process.
 */

/** keccak256("Transfer(address,address,uint256)"): topic0 of every ERC-20 Transfer log. */
export const TRANSFER_TOPIC: Hex = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A block as the watcher needs it: where it is, which fork it is on, and when it was mined. */
export interface BlockRef {
  number: bigint;
  hash: Hex;
  /** Unix seconds. */
  timestamp: bigint;
}

/** One decoded ERC-20 Transfer log. Addresses are lowercase. */
export interface TransferLog {
  token: Hex;
  from: Hex;
  to: Hex;
  value: bigint;
  txHash: Hex;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hex;
}

interface TransferLogQuery {
  /** Token contracts (lowercase). */
  tokens: readonly Hex[];
  /** Receiving addresses (lowercase); the query matches topic2 (`to`) against them. */
  to: readonly Hex[];
  fromBlock: bigint;
  toBlock: bigint;
}

/** The port the watcher reads a chain through; tests may substitute their own. */
export interface ChainRpc {
  /** The latest block. */
  getHead(): Promise<BlockRef>;
  /** The canonical block at `number`, or undefined when the node does not have it (yet). */
  getBlock(number: bigint): Promise<BlockRef | undefined>;
  /** Transfer logs of `tokens` to `to` in the inclusive range; throws a range error (see `isRangeError`) when the node refuses the size. */
  getTransferLogs(q: TransferLogQuery): Promise<TransferLog[]>;
}

export interface RetryOptions {
  /** Total attempts including the first (default 3). */
  attempts: number;
  /** Delay cap of the first retry in ms (default 200); doubles each retry. */
  baseMs: number;
  /** Upper bound of any single delay in ms (default 2,000). */
  maxMs: number;
  /** Whether an error is worth another attempt (default: always). */
  shouldRetry?: (err: unknown) => boolean;
}

const DEFAULT_RETRY: RetryOptions = { attempts: 3, baseMs: 200, maxMs: 2_000 };

/**
 * Calls `fn` until it resolves or `attempts` are used up, sleeping between attempts with
 * exponential backoff and full jitter: a uniformly random delay in `[0, min(maxMs, baseMs·2^i))`.
 * Full jitter (rather than a fixed doubling) spreads the retries of several processes that lost
 * the same endpoint at the same moment, so they do not hammer it in lockstep when it returns.
 * The last error is rethrown unchanged.
 *
 * @example
 * const head = await withRetry(() => client.getBlockNumber(), { attempts: 3, baseMs: 200, maxMs: 2000 });
 * // a range error is final at once:
 * await withRetry(() => rpc.getTransferLogs(q), { ...DEFAULT_RETRY, shouldRetry: (e) => !isRangeError(e) });
 */
export async function withRetry<T>(fn: () => Promise<T>, opts: Partial<RetryOptions> = {}): Promise<T> {
  const { attempts, baseMs, maxMs, shouldRetry } = { ...DEFAULT_RETRY, ...opts };
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i + 1 >= attempts || (shouldRetry && !shouldRetry(err))) throw err;
      await sleep(backoffDelay(i, baseMs, maxMs));
    }
  }
}

/** The full-jitter delay before retry number `i` (0-based). */
export function backoffDelay(i: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(i, 30));
  return Math.floor(random() * cap);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * True when a node refused an `eth_getLogs` because the block range or the result is too large;
 * the watcher then halves its range instead of retrying the same request. Providers word it
 * differently (there is no standard code), so this matches the known phrasings:
 * Infura/geth "query returned more than 10000 results" (-32005), Alchemy "Log response size
 * exceeded", QuickNode/Ankr "block range … limit", BSC "exceed maximum block range", plus viem's
 * own `ResponseBodyTooLargeError` (10 MB default) and HTTP 413.
 *
 * @example
 * isRangeError(new Error('query returned more than 10000 results')); // true
 * isRangeError(new Error('fetch failed'));                            // false
 */
export function isRangeError(err: unknown): boolean {
  for (const e of causeChain(err)) {
    if (e instanceof ResponseBodyTooLargeError) return true;
    const o = e as { code?: unknown; status?: unknown; details?: unknown; message?: unknown; shortMessage?: unknown };
    if (o.status === 413) return true;
    const text = [o.details, o.shortMessage, o.message].filter((x) => typeof x === 'string').join(' ');
    if (RANGE_ERROR_RE.test(text)) return true;
  }
  return false;
}
const RANGE_ERROR_RE =
  /(block range|range (is )?too (large|wide|big)|exceed(s|ed)? (the )?max(imum)? (block )?range|more than \d+ (results|logs)|too many (results|logs|blocks)|response size|result (set )?too large|query timeout exceeded|limited to (a )?[\d,]+ (block|range))/i;

/**
 * The block span a provider's refusal names, if any, so the watcher jumps to a size that fits
 * instead of halving its way there. Alchemy and Infura suggest a range ("this block range should
 * work: [0x1, 0x7d0]", "Try with this block range [0x1, 0x7d0]."); others state their cap
 * (QuickNode "limited to a 10,000 range", geth/BSC "exceed maximum block range: 5000", Alchemy
 * "up to a 2K block range").
 *
 * @example
 * rangeHint(new Error('query returned more than 10000 results. Try with this block range [0x10, 0x1f].')); // 16
 */
export function rangeHint(err: unknown): number | undefined {
  for (const e of causeChain(err)) {
    const o = e as { details?: unknown; shortMessage?: unknown; message?: unknown };
    const text = [o.details, o.shortMessage, o.message].filter((x) => typeof x === 'string').join(' ');
    const range = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(text);
    if (range) {
      const span = BigInt(range[2]!) - BigInt(range[1]!) + 1n;
      if (span >= 1n && span <= 10_000_000n) return Number(span);
    }
    const cap = /(?:limited to (?:a )?|maximum block range:?\s*|up to (?:a )?)(\d[\d,]*)(k?)\b/i.exec(text);
    if (cap) {
      const n = Number(cap[1]!.replaceAll(',', '')) * (cap[2] ? 1000 : 1);
      if (n >= 1) return n;
    }
  }
  return undefined;
}

/**
 * A one-line description of an RPC or database error that is safe to log: viem messages embed the
 * request URL, and RPC URLs commonly carry an API key in the path or query
 * (`https://mainnet.infura.io/v3/<key>`), so every URL is replaced by its origin-less placeholder.
 *
 * @example
 * describeError(err); // "HTTP request failed. (fetch failed)": viem's message would add "URL: https://…/v3/<key>"
 */
export function describeError(err: unknown): string {
  // A database error (SQLSTATE code) is described by its structure only: its message and detail
  // quote the row's values (see db/log-safe.ts).
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const { type: _type, ...fields } = logSafeError(err);
    return `database error ${Object.entries(fields)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`.slice(0, 500);
  }
  const e = err as { shortMessage?: unknown; details?: unknown; message?: unknown } | null;
  const short = typeof e?.shortMessage === 'string' && e.shortMessage ? e.shortMessage : undefined;
  const details = typeof e?.details === 'string' && e.details ? e.details : undefined;
  const text = short ? (details ? `${short} (${details})` : short) : typeof e?.message === 'string' ? e.message : String(err);
  return redactUrls(text).split('\n')[0]!.slice(0, 500);
}

/** Replaces every http(s)/ws(s) URL in `text` with `<rpc-url>`. */
export function redactUrls(text: string): string {
  return text.replace(/\b(https?|wss?):\/\/[^\s"'<>]+/gi, '<rpc-url>');
}

function* causeChain(err: unknown): Generator<unknown> {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}

export interface ChainRpcOptions {
  /** Per-request timeout in ms (default 10,000). */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** Max receiving addresses per eth_getLogs (default 200), see `getTransferLogs`. */
  addressesPerQuery?: number;
}

/**
 * A viem public client for the chain's RPC URLs (failover, rate limits and chain-id checks:
 * transport.ts) behind the `ChainRpc` port.
 *
 * @example
 * const rpc = createChainRpc(config.chains[0]!, { timeoutMs: 10_000 });
 * const head = await rpc.getHead();
 * const logs = await rpc.getTransferLogs({ tokens: [usdc], to: [merchant], fromBlock: head.number - 10n, toBlock: head.number });
 */
export function createChainRpc(chain: Pick<ChainConfig, 'chainId' | 'rpcUrl' | 'rpcUrls'>, opts: ChainRpcOptions = {}): ChainRpc {
  const client: PublicClient = createPublicClient({ transport: chainTransport(chain, { timeoutMs: opts.timeoutMs ?? 10_000 }) });
  const retry = { ...DEFAULT_RETRY, ...opts.retry };
  // Node operators cap a topic OR-list or the request size in different ways; 200 addresses keep a
  // request under ~14 kB. Merchants beyond that cost one more request per range per 200 wallets.
  const perQuery = opts.addressesPerQuery ?? 200;

  const getBlockRaw = async (tag: Hex | 'latest'): Promise<BlockRef | undefined> => {
    const b = await client.request({ method: 'eth_getBlockByNumber', params: [tag, false] });
    if (!b || b.number === null || b.hash === null) return undefined;
    return { number: BigInt(b.number), hash: b.hash.toLowerCase() as Hex, timestamp: BigInt(b.timestamp) };
  };

  return {
    async getHead() {
      const b = await withRetry(() => getBlockRaw('latest'), retry);
      if (!b) throw new Error('eth_getBlockByNumber(latest) returned no block');
      return b;
    },
    getBlock(number) {
      return withRetry(() => getBlockRaw(numberToHex(number)), retry);
    },
    async getTransferLogs(q) {
      if (q.to.length === 0 || q.tokens.length === 0) return [];
      const chunk = (to: readonly Hex[]) =>
        withRetry(
          () =>
            client.request({
              method: 'eth_getLogs',
              params: [{ address: [...q.tokens], topics: [TRANSFER_TOPIC, null, to.map(addressTopic)], fromBlock: numberToHex(q.fromBlock), toBlock: numberToHex(q.toBlock) }],
            }),
          { ...retry, shouldRetry: (e) => !isRangeError(e) && (retry.shouldRetry?.(e) ?? true) },
        );
      const out: TransferLog[] = [];
      // A few requests in flight: 10,000 wallets are 50 requests per range, and one after the other
      // their round trips made a tick (and the detection of a payment) last seconds at a hosted
      // provider's latency (bench/watcher-scale.ts). Few enough to stay inside rate limits.
      for (let i = 0; i < q.to.length; i += perQuery * LOG_QUERIES_IN_FLIGHT) {
        const wave: ReturnType<typeof chunk>[] = [];
        for (let j = i; j < Math.min(q.to.length, i + perQuery * LOG_QUERIES_IN_FLIGHT); j += perQuery) wave.push(chunk(q.to.slice(j, j + perQuery)));
        for (const logs of await Promise.all(wave)) {
          for (const log of logs) {
            const t = decodeTransferLog(log);
            if (t) out.push(t);
          }
        }
      }
      return out;
    },
  };
}

/** eth_getLogs requests of one range sent at once (each for `addressesPerQuery` receiving addresses). */
const LOG_QUERIES_IN_FLIGHT = 4;

/** A 20-byte address as a 32-byte log topic. */
export function addressTopic(address: Hex): Hex {
  return `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}` as Hex;
}

interface RpcLogLike {
  address: string;
  topics: readonly (string | null)[];
  data: string;
  transactionHash: string | null;
  logIndex: string | null;
  blockNumber: string | null;
  blockHash: string | null;
  removed?: boolean;
}

/**
 * Decodes a raw log as a standard ERC-20 Transfer, or undefined when it is not one (pending, removed,
 * a non-standard token that does not index `from`/`to`, or a malformed value).
 *
 * @example
 * decodeTransferLog(rawLog)?.value; // 2500000n
 */
export function decodeTransferLog(log: RpcLogLike): TransferLog | undefined {
  if (log.removed) return undefined;
  if (log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) return undefined;
  if (!log.transactionHash || log.logIndex === null || !log.blockNumber || !log.blockHash) return undefined;
  if (!/^0x[0-9a-fA-F]{64}$/.test(log.data)) return undefined;
  const from = topicAddress(log.topics[1]);
  const to = topicAddress(log.topics[2]);
  if (!from || !to) return undefined;
  return {
    token: log.address.toLowerCase() as Hex,
    from,
    to,
    value: BigInt(log.data),
    txHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(BigInt(log.logIndex)),
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash.toLowerCase() as Hex,
  };
}

function topicAddress(topic: string | null | undefined): Hex | undefined {
  if (!topic || !/^0x0{24}[0-9a-fA-F]{40}$/.test(topic)) return undefined;
  return `0x${topic.slice(26).toLowerCase()}` as Hex;
}
