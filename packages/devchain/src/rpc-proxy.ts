import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fault-injecting JSON-RPC proxy on loopback in front of a node (anvil): real HTTP, so the client
 * under test runs unmodified. Two kinds of behaviour, combinable:
 *
 * Faults (`set`), per request, flaky with `rate` (0..1, default 1):
 * - `pass`: forwards everything;
 * - `drop`: destroys the connection without an answer (a crashed node, a load balancer reset);
 * - `delay`: forwards after `delayMs`;
 * - `rpc-error`: HTTP 200 with a JSON-RPC error per call (`-32603 internal error`);
 * - `http-500`: HTTP 500 with a text body;
 * - `lag`: a node `lagBlocks` behind: eth_blockNumber / "latest" answer head − k, a block above it
 *   is `null`, and eth_getLogs reaching above it is refused with geth's "header not found".
 *
 * Provider limits (`limit`), as hosted providers enforce them:
 * - `maxLogBlockRange`: eth_getLogs spanning more blocks is refused;
 * - `maxLogResults`: eth_getLogs whose answer holds more logs is refused;
 * - `style`: the wording and code of those refusals: `infura` (-32005 "query returned more than N
 *   results. Try with this block range [a, b]."), `alchemy` ("Log response size exceeded … this
 *   block range should work: [a, b]" / "up to a N block range"), `quicknode` ("eth_getLogs is
 *   limited to a N range"), `geth` (BSC and geth-based public nodes: "exceed maximum block range: N"),
 *   `generic` ("block range too large");
 * - `rateLimit`: at most `requests` per `windowMs`; beyond that HTTP 429 with `Retry-After`
 *   (seconds) and an Alchemy-style body, or (`as: 'rpc-error'`) HTTP 200 with Infura's -32005
 *   "project ID request rate exceeded". A request that arrives before the announced Retry-After has
 *   passed, more than `graceMs` (default: half the Retry-After) after the period's first 429
 *   (requests in flight then are not the client's fault), is counted in `stats().early`: a client
 *   that honours Retry-After keeps it at 0, one that retries at once does not;
 * - `chainId`: eth_chainId and net_version answer this id (a provider URL of another chain).
 */
export type RpcFaultMode = 'pass' | 'drop' | 'delay' | 'rpc-error' | 'http-500' | 'lag';

export interface RpcFault {
  mode: RpcFaultMode;
  rate?: number;
  delayMs?: number;
  lagBlocks?: number;
}

export type LimitStyle = 'infura' | 'alchemy' | 'quicknode' | 'geth' | 'generic';

export interface RpcLimits {
  maxLogBlockRange?: number;
  maxLogResults?: number;
  style?: LimitStyle;
  rateLimit?: { requests: number; windowMs: number; retryAfterSeconds?: number; as?: 'http-429' | 'rpc-error'; graceMs?: number };
  chainId?: number;
}

export interface RpcProxyStats {
  /** HTTP requests seen. */
  requests: number;
  /** JSON-RPC calls seen, by method. */
  calls: Record<string, number>;
  /** Requests faulted, by fault mode. */
  faulted: Record<string, number>;
  /** eth_getLogs refused for their block range / their result count. */
  rangeRefused: number;
  resultsRefused: number;
  /** Requests answered 429 (or the rate-limit error) and requests that came before Retry-After had passed. */
  rateLimited: number;
  early: number;
  /** Bytes of the request bodies received and of the JSON-RPC answers sent (what a provider meters). */
  bytesIn: number;
  bytesOut: number;
  /** The most requests the proxy was handling at once (a client's concurrency). */
  maxInFlight: number;
}

export interface RpcProxy {
  url: string;
  set(fault: RpcFault): void;
  limit(limits: RpcLimits): void;
  stats(): RpcProxyStats;
  close(): Promise<void>;
}

interface RpcCall {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: unknown[];
}

const hexToBig = (h: unknown) => (typeof h === 'string' && /^0x[0-9a-f]+$/i.test(h) ? BigInt(h) : undefined);
const toHex = (n: bigint) => `0x${n.toString(16)}`;

/** Starts the proxy on 127.0.0.1 (a free port) in front of `upstream`. */
export async function startRpcProxy(upstream: string, initial: { fault?: RpcFault; limits?: RpcLimits } = {}): Promise<RpcProxy> {
  let fault: RpcFault = initial.fault ?? { mode: 'pass' };
  let limits: RpcLimits = initial.limits ?? {};
  const stats: RpcProxyStats = { requests: 0, calls: {}, faulted: {}, rangeRefused: 0, resultsRefused: 0, rateLimited: 0, early: 0, bytesIn: 0, bytesOut: 0, maxInFlight: 0 };
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let window: number[] = [];
  let retryAfterUntil = 0;
  /** When the current Retry-After period began (its first 429). */
  let periodStart = 0;

  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  };
  const upstreamHead = async (): Promise<bigint> => BigInt(((await forward({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] })) as { result: string }).result);
  const error = (call: RpcCall, code: number, message: string) => ({ jsonrpc: '2.0', id: call.id, error: { code, message } });
  const reply = (call: RpcCall, result: unknown) => ({ jsonrpc: '2.0', id: call.id, result });

  /** One call as a node `k` blocks behind would answer it. */
  const lagged = async (call: RpcCall, k: number): Promise<unknown> => {
    const visible = (await upstreamHead()) - BigInt(k);
    const params = call.params ?? [];
    switch (call.method) {
      case 'eth_blockNumber':
        return reply(call, toHex(visible));
      case 'eth_getBlockByNumber': {
        const tag = params[0];
        if (tag === 'latest' || tag === 'safe' || tag === 'finalized' || tag === 'pending') return forward({ ...call, params: [toHex(visible), ...params.slice(1)] });
        const n = hexToBig(tag);
        if (n !== undefined && n > visible) return reply(call, null);
        return forward(call);
      }
      case 'eth_getLogs': {
        const f = (params[0] ?? {}) as { toBlock?: unknown };
        const to = f.toBlock === undefined || f.toBlock === 'latest' ? visible + 1n : hexToBig(f.toBlock);
        if (to === undefined || to > visible) return error(call, -32000, 'header not found');
        return forward(call);
      }
      default:
        return forward(call);
    }
  };

  /** An eth_getLogs under the provider's range and result caps. */
  const cappedLogs = async (call: RpcCall): Promise<unknown> => {
    const style = limits.style ?? 'generic';
    const f = ((call.params ?? [])[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown };
    const head = f.fromBlock === undefined || f.toBlock === undefined || f.toBlock === 'latest' || f.fromBlock === 'latest' ? await upstreamHead() : 0n;
    const from = hexToBig(f.fromBlock) ?? head;
    const to = hexToBig(f.toBlock) ?? head;
    const cap = limits.maxLogBlockRange;
    if (cap !== undefined && to - from + 1n > BigInt(cap)) {
      stats.rangeRefused++;
      const fits = `[${toHex(from)}, ${toHex(from + BigInt(cap) - 1n)}]`;
      switch (style) {
        case 'infura':
          return error(call, -32005, `exceed maximum block range: ${cap}`);
        case 'alchemy':
          return error(call, -32600, `You can make eth_getLogs requests with up to a ${cap} block range. Based on your parameters, this block range should work: ${fits}`);
        case 'quicknode':
          return error(call, -32614, `eth_getLogs is limited to a ${cap.toLocaleString('en-US')} range`);
        case 'geth':
          return error(call, -32000, `exceed maximum block range: ${cap}`);
        default:
          return error(call, -32000, 'block range too large');
      }
    }
    const answer = (await forward(call)) as { result?: { blockNumber: string }[] };
    const max = limits.maxLogResults;
    if (max !== undefined && Array.isArray(answer.result) && answer.result.length > max) {
      stats.resultsRefused++;
      // The range a provider suggests: up to the block before the one holding the (max+1)th log.
      const over = BigInt(answer.result[max]!.blockNumber);
      const fits = `[${toHex(from)}, ${toHex(over > from ? over - 1n : from)}]`;
      switch (style) {
        case 'alchemy':
          return error(
            call,
            -32602,
            `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: ${fits}`,
          );
        case 'infura':
          return error(call, -32005, `query returned more than ${max} results. Try with this block range ${fits}.`);
        default:
          return error(call, -32005, `query returned more than ${max} results`);
      }
    }
    return answer;
  };

  const one = async (call: RpcCall): Promise<unknown> => {
    stats.calls[call.method ?? '?'] = (stats.calls[call.method ?? '?'] ?? 0) + 1;
    if (limits.chainId !== undefined && call.method === 'eth_chainId') return reply(call, toHex(BigInt(limits.chainId)));
    if (limits.chainId !== undefined && call.method === 'net_version') return reply(call, String(limits.chainId));
    if (call.method === 'eth_getLogs' && (limits.maxLogBlockRange !== undefined || limits.maxLogResults !== undefined)) return cappedLogs(call);
    return forward(call);
  };

  /** True when the request is over the rate limit (and was answered). */
  const rateLimited = (res: ServerResponse, calls: RpcCall[], batch: boolean): boolean => {
    const rl = limits.rateLimit;
    if (!rl) return false;
    const now = Date.now();
    // Requests sent before the client could read the period's first 429 are not its fault (on a
    // loaded machine that answer can take a few hundred ms to be read): only those arriving
    // `graceMs` after it count.
    if (now < retryAfterUntil && now > periodStart + (rl.graceMs ?? ((rl.retryAfterSeconds ?? 1) * 1000) / 2)) stats.early++;
    window = window.filter((t) => t > now - rl.windowMs);
    if (window.length < rl.requests) {
      window.push(now);
      return false;
    }
    stats.rateLimited++;
    const seconds = rl.retryAfterSeconds ?? 1;
    if (now >= retryAfterUntil) periodStart = now;
    retryAfterUntil = Math.max(retryAfterUntil, now + seconds * 1000);
    if (rl.as === 'rpc-error') {
      const out = calls.map((c) => error(c, -32005, 'project ID request rate exceeded'));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(batch ? out : out[0]));
    } else {
      const body = { jsonrpc: '2.0', id: calls[0]?.id ?? null, error: { code: 429, message: 'Your app has exceeded its compute units per second capacity.' } };
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(seconds) }).end(JSON.stringify(body));
    }
    return true;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    stats.requests++;
    stats.bytesIn += Buffer.byteLength(raw);
    let parsed: RpcCall | RpcCall[];
    try {
      parsed = JSON.parse(raw);
    } catch {
      res.writeHead(400).end('bad json');
      return;
    }
    const batch = Array.isArray(parsed);
    const calls = batch ? (parsed as RpcCall[]) : [parsed as RpcCall];
    const send = (out: unknown[]) => {
      const body = JSON.stringify(batch ? out : out[0]);
      stats.bytesOut += Buffer.byteLength(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    };
    if (rateLimited(res, calls, batch)) return;
    const f = fault;
    const hit = f.mode !== 'pass' && Math.random() < (f.rate ?? 1);
    if (hit) {
      stats.faulted[f.mode] = (stats.faulted[f.mode] ?? 0) + 1;
      switch (f.mode) {
        case 'drop':
          req.socket.destroy();
          return;
        case 'http-500':
          res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded');
          return;
        case 'rpc-error':
          send(calls.map((c) => error(c, -32603, 'internal error')));
          return;
        case 'delay':
          await new Promise((r) => setTimeout(r, f.delayMs ?? 1000));
          break;
        case 'lag':
          send(await Promise.all(calls.map((c) => lagged(c, f.lagBlocks ?? 3))));
          return;
      }
    }
    send(await Promise.all(calls.map(one)));
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      stats.maxInFlight = Math.max(stats.maxInFlight, ++inFlight);
      handle(req, res, Buffer.concat(chunks).toString('utf8'))
        .catch((err: Error) => {
          // Upstream unreachable (anvil stopping): a 502, like a real proxy.
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err.message));
        })
        .finally(() => inFlight--);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    set(next) {
      fault = next;
    },
    limit(next) {
      limits = next;
      window = [];
      retryAfterUntil = 0;
      periodStart = 0;
    },
    stats: () => ({ ...stats, calls: { ...stats.calls }, faulted: { ...stats.faulted } }),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
