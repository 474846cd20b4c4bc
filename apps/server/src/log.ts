import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * One log format for the whole process: the HTTP layer logs through fastify's pino, and the few
 * loggers outside it (chain watcher, background loops, webhook dispatcher, settlement executor) are
 * pino loggers too, so one `jq 'select(.level >= 50)'` or one log shipper rule sees every line:
 * `level` as a number, `time` in epoch milliseconds, `pid`, `hostname`, the fields, then `msg`.
 *
 * Callers pass only fields they built themselves (ids, block numbers, counts, `logSafeError`
 * output): never a config object, an RPC URL (API keys live in them) or a raw database error.
 */
export type { Logger };

/** Bigints (block numbers, amounts) are logged as decimal strings: a JSON number would round them. */
function bigintsAsStrings(o: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(o)) {
    if (typeof v !== 'bigint') continue;
    out ??= { ...o };
    out[k] = v.toString();
  }
  return out ?? o;
}

const toStderr: DestinationStream = { write: (line: string) => void process.stderr.write(line) };

/**
 * A pino logger at `level` ('silent', or a name pino does not know, logs nothing) with `base`
 * fields on every line, writing one JSON line per call to stderr, or to `destination` (tests).
 *
 * @example
 * const log = createLogger('info', { chain_id: 31337 });
 * log.warn({ at_block: 120n }, 'reorg detected'); // {"level":40,"time":…,"pid":…,"hostname":…,"chain_id":31337,"at_block":"120","msg":"reorg detected"}
 */
export function createLogger(level: string, base: Record<string, unknown> = {}, destination: DestinationStream = toStderr): Logger {
  const known = level === 'silent' || level in pino.levels.values;
  const root = pino({ level: known ? level : 'silent', formatters: { log: bigintsAsStrings, bindings: bigintsAsStrings } }, destination);
  return Object.keys(base).length ? root.child(base) : root;
}

/** The process's logger for lines outside any component (a failed loop, an executor warning). */
export const processLog = createLogger('info');
