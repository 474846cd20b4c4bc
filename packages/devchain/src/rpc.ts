// A minimal JSON-RPC call over fetch, for the few anvil methods viem does not type
// (anvil_reorg) and for the startup probe, where a viem client's retries would only add delay.

export interface RpcRequestOptions {
  /** Abort the HTTP request after this many ms (default 5000). */
  timeoutMs?: number;
}

let nextId = 1;

/**
 * Sends one JSON-RPC request and returns its `result`, or throws with the node's error message.
 *
 * @example
 * const chainIdHex = await rpcRequest<string>('http://127.0.0.1:8545', 'eth_chainId', []);
 */
export async function rpcRequest<T = unknown>(rpcUrl: string, method: string, params: unknown[], opts: RpcRequestOptions = {}): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status} from ${rpcUrl}`);
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method} failed (${body.error.code}): ${body.error.message}`);
  return body.result as T;
}
