/**
 * The Solana JSON-RPC client of the watcher: @solana/kit's `createSolanaRpc` (unmodified), with a
 * per-request timeout so a hung node fails the tick instead of stalling it.
 */
import { createDefaultRpcTransport, createSolanaRpcFromTransport, type Rpc, type SolanaRpcApi } from '@solana/kit';

export type SolanaRpc = Rpc<SolanaRpcApi>;

export function createSolanaRpcClient(url: string, timeoutMs = 10_000): SolanaRpc {
  const base = createDefaultRpcTransport({ url });
  return createSolanaRpcFromTransport((<T>(req: Parameters<typeof base>[0]) => base<T>({ ...req, signal: req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs) })) as typeof base);
}
