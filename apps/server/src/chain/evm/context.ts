import type { ChainConfig } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { LOG_LEVELS, levelThreshold, logLine, type LogLevelName } from '../../log.ts';
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
 * A JSON-lines logger at `level` (pino's level names; 'silent' logs nothing), one line per call on
 * stderr by default, in pino's line format (see log.ts).
 *
 * @example
 * const log = createChainLogger('info', { chain_id: 31337 });
 * log.warn('reorg detected', { at_block: 120n }); // {"level":40,"time":…,"msg":"reorg detected","chain_id":31337,"at_block":"120"}
 */
export function createChainLogger(level: string, base: LogFields = {}, write: (line: string) => void = (l) => process.stderr.write(l + '\n')): ChainLogger {
  const min = levelThreshold(level);
  const emit = (lvl: LogLevelName, msg: string, fields?: LogFields) => {
    if (LOG_LEVELS[lvl] < min) return;
    write(logLine(lvl, msg, { ...base, ...fields }));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
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
