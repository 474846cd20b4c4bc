import { isIP } from 'node:net';
import { ConfigError } from './errors.ts';

/**
 * Which peers may tell Tollgate the client's address through `X-Forwarded-For` (docs/operations.md
 * "Behind a reverse proxy"):
 * - `false`: none; the client address is the TCP peer's (the default);
 * - a number n: n proxies in a row, whoever they are: the client is the n-th `X-Forwarded-For`
 *   entry from the right — only safe when nothing but the proxy can reach Tollgate's port;
 * - a list of addresses and CIDR ranges (or proxy-addr's names `loopback`, `linklocal`,
 *   `uniquelocal`): the hops whose address is in the list.
 */
export type TrustProxy = false | number | string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const EXPECTED = 'expected false, a hop count such as 1, or addresses and CIDR ranges such as 127.0.0.1 or 10.0.0.0/8,fd00::/8';

/** A value quoted for the error line: escaped (one line whatever it holds) and cut short. */
const show = (v: string) => JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);

/** One list entry: an IP address, an address/prefix-length range, or a named range; else why not. */
function entryProblem(entry: string): string | undefined {
  if (NAMED_RANGES.has(entry)) return undefined;
  const slash = entry.indexOf('/');
  const ip = slash < 0 ? entry : entry.slice(0, slash);
  // A zone id (fe80::1%eth0) never appears in the peer addresses proxy-addr compares.
  const family = ip.includes('%') ? 0 : isIP(ip);
  if (family === 0) return `${show(entry)} is not an IP address or CIDR range`;
  if (slash < 0) return undefined;
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  // 1 at least, as fastify's proxy-addr requires: a /0 would trust every address anyway.
  if (!/^\d{1,3}$/.test(bits) || Number(bits) < 1 || Number(bits) > max) return `${show(entry)} has an invalid prefix length (1-${max})`;
  return undefined;
}

/**
 * Parses `TRUST_PROXY` (a string) or the config file's `trust_proxy` (false, a number, a string or
 * an array of strings). `true` is refused: it trusts every hop, so the address becomes the leftmost
 * `X-Forwarded-For` entry, which the client writes itself. Throws a {@link ConfigError} naming `key`.
 *
 * @example parseTrustProxy('127.0.0.1, 10.0.0.0/8', 'TRUST_PROXY') // => ['127.0.0.1', '10.0.0.0/8']
 * @example parseTrustProxy('1', 'TRUST_PROXY') // => 1
 */
export function parseTrustProxy(raw: unknown, key: string): TrustProxy {
  if (raw === undefined || raw === false) return false;
  // The file may hold a list as a JSON array of strings: it is read like the comma list.
  const text = Array.isArray(raw) ? (raw.every((e) => typeof e === 'string') ? raw.join(',') : undefined) : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : raw;
  if (typeof text !== 'string') throw new ConfigError(key, EXPECTED);
  const value = text.trim();
  if (value === 'false') return false;
  if (value === 'true') {
    throw new ConfigError(key, `true would let any client choose its address through X-Forwarded-For; ${EXPECTED}`);
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 100) throw new ConfigError(key, `a hop count must be at most 100 (got ${show(value)})`);
    // 0 hops trusts nobody: the same as false.
    return hops === 0 ? false : hops;
  }
  const entries = value.split(',').map((e) => e.trim());
  for (const e of entries) {
    if (e === '') throw new ConfigError(key, `has an empty entry (${show(value)}); separate addresses with single commas`);
    const problem = entryProblem(e);
    if (problem) throw new ConfigError(key, `${problem}; ${EXPECTED}`);
  }
  return entries;
}
