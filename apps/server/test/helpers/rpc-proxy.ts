import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A loopback JSON-RPC proxy between Tollgate's chain watcher and anvil that injects faults:
 * - `pass`: forwards everything;
 * - `drop`: destroys the connection without an answer (a crashed node, a load balancer reset);
 * - `delay`: forwards after `delayMs`;
 * - `rpc-error`: answers HTTP 200 with a JSON-RPC error object per call (`-32603 internal error`);
 * - `http-500`: answers HTTP 500 with a text body;
 * - `lag`: a node `lagBlocks` behind the chain: eth_blockNumber and eth_getBlockByNumber("latest")
 *   answer head − k, a block above head − k is `null`, and eth_getLogs reaching above it is refused
 *   with geth's "header not found".
 * `rate` (0..1, default 1) makes a fault mode flaky: only that fraction of requests is faulted.
 */
export type RpcFaultMode = 'pass' | 'drop' | 'delay' | 'rpc-error' | 'http-500' | 'lag';

export interface RpcFault {
  mode: RpcFaultMode;
  rate?: number;
  delayMs?: number;
  lagBlocks?: number;
}

export interface RpcProxy {
  url: string;
  set(fault: RpcFault): void;
  /** Requests seen and requests faulted, by mode, since start. */
  stats(): { requests: number; faulted: Record<string, number> };
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

/** Starts the proxy on 127.0.0.1:0 in front of `upstream` (anvil's RPC URL). */
export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  let fault: RpcFault = { mode: 'pass' };
  let requests = 0;
  const faulted: Record<string, number> = {};
  const sockets = new Set<Socket>();

  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  };
  const upstreamHead = async (): Promise<bigint> => {
    const r = (await forward({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] })) as { result: string };
    return BigInt(r.result);
  };

  /** One call as a node `k` blocks behind would answer it. */
  const lagged = async (call: RpcCall, k: number): Promise<unknown> => {
    const visible = (await upstreamHead()) - BigInt(k);
    const reply = (result: unknown) => ({ jsonrpc: '2.0', id: call.id, result });
    const params = call.params ?? [];
    switch (call.method) {
      case 'eth_blockNumber':
        return reply(toHex(visible));
      case 'eth_getBlockByNumber': {
        const tag = params[0];
        if (tag === 'latest' || tag === 'safe' || tag === 'finalized' || tag === 'pending') return forward({ ...call, params: [toHex(visible), ...params.slice(1)] });
        const n = hexToBig(tag);
        if (n !== undefined && n > visible) return reply(null);
        return forward(call);
      }
      case 'eth_getLogs': {
        const f = (params[0] ?? {}) as { toBlock?: unknown; fromBlock?: unknown };
        const to = f.toBlock === undefined || f.toBlock === 'latest' ? visible + 1n : hexToBig(f.toBlock);
        if (to === undefined || to > visible) return { jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'header not found' } };
        return forward(call);
      }
      default:
        return forward(call);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    requests++;
    const f = fault;
    const hit = f.mode !== 'pass' && Math.random() < (f.rate ?? 1);
    if (hit) faulted[f.mode] = (faulted[f.mode] ?? 0) + 1;
    let parsed: RpcCall | RpcCall[];
    try {
      parsed = JSON.parse(raw);
    } catch {
      res.writeHead(400).end('bad json');
      return;
    }
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    const send = (out: unknown[]) => {
      const text = JSON.stringify(Array.isArray(parsed) ? out : out[0]);
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    };
    if (hit) {
      switch (f.mode) {
        case 'drop':
          req.socket.destroy();
          return;
        case 'http-500':
          res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded');
          return;
        case 'rpc-error':
          send(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, error: { code: -32603, message: 'internal error' } })));
          return;
        case 'delay':
          await new Promise((r) => setTimeout(r, f.delayMs ?? 1000));
          break;
        case 'lag':
          send(await Promise.all(calls.map((c) => lagged(c, f.lagBlocks ?? 3))));
          return;
      }
    }
    send(Array.isArray(parsed) ? ((await forward(parsed)) as unknown[]) : [await forward(parsed)]);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: Error) => {
        // Upstream unreachable (anvil stopping): a 502, like a real proxy.
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err.message));
      });
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
    stats: () => ({ requests, faulted: { ...faulted } }),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
