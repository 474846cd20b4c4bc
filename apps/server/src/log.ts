import { hostname } from 'node:os';

/**
 * One log format for the whole process: the HTTP layer logs through fastify's pino, and the few
 * loggers outside it (chain watcher, background loops, webhook dispatcher) write the same line
 * shape, so one `jq 'select(.level >= 50)'` or one log shipper rule sees every line. pino's shape:
 * `level` as a number, `time` in epoch milliseconds, then `pid`, `hostname`, `msg` and fields.
 */
export const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

const HOST = hostname();

/**
 * Serializes one log line as pino would (bigints become strings).
 *
 * @example
 * logLine('warn', 'reorg: cursor rewound', { chain_id: 31337 });
 * // {"level":40,"time":1764000000000,"pid":42,"hostname":"box","msg":"reorg: cursor rewound","chain_id":31337}
 */
export function logLine(level: LogLevelName, msg: string, fields: Record<string, unknown> = {}, now = Date.now()): string {
  const out: Record<string, unknown> = { level: LOG_LEVELS[level], time: now, pid: process.pid, hostname: HOST, msg };
  for (const [k, v] of Object.entries(fields)) out[k] = typeof v === 'bigint' ? v.toString() : v;
  return JSON.stringify(out);
}

/** The numeric threshold of a pino level name; 'silent' (or an unknown name) logs nothing. */
export function levelThreshold(level: string): number {
  return level in LOG_LEVELS ? LOG_LEVELS[level as LogLevelName] : Infinity;
}
