import type { ChainConfig } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { createLogger } from '../../log.ts';
import type { ChainRpc } from './rpc.ts';

/** What every step of one chain's watcher works with. */
export interface WatchContext {
  db: Database;
  rpc: ChainRpc;
  chain: ChainConfig;
  clock: Clock;
  log: ChainLogger;
}

export type LogFields = Record<string, string | number | boolean | bigint | null | undefined>;

/**
 * A small structured logger. Callers pass only fields they built themselves (ids, block numbers,
 * counts, `describeError` output): never a config object, an RPC URL (API keys live in them) or a
 * raw error whose message embeds one.
 */
export interface ChainLogger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/**
 * The pino logger of log.ts at `level` (pino's level names; 'silent' logs nothing), message first:
 * one JSON line per call on stderr, or given to `write` (tests).
 *
 * @example
 * const log = createChainLogger('info', { chain_id: 31337 });
 * log.warn('reorg detected', { at_block: 120n }); // {"level":40,"time":…,"chain_id":31337,"at_block":"120","msg":"reorg detected"}
 */
export function createChainLogger(level: string, base: LogFields = {}, write?: (line: string) => void): ChainLogger {
  const log = createLogger(level, base, write ? { write } : undefined);
  return {
    debug: (m, f) => log.debug(f ?? {}, m),
    info: (m, f) => log.info(f ?? {}, m),
    warn: (m, f) => log.warn(f ?? {}, m),
    error: (m, f) => log.error(f ?? {}, m),
  };
}

/**
 * Lets the event loop run: PGlite executes queries on the main thread, so a loop of awaited
 * queries (a long catch-up) would otherwise delay HTTP requests and timers until it ends.
 */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `fn` over `items` with at most `limit` calls in flight (block headers for a range's logs).
 *
 * @example
 * const blocks = await mapLimit([1n, 2n, 3n], 8, (n) => rpc.getBlock(n));
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
