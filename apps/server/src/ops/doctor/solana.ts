import type { SolanaChainConfig } from '../../config/schema.ts';
import { redactUrl, scrub, within, type CheckResult, type DoctorOptions } from './types.ts';

async function rpc<T>(url: string, method: string, params: unknown[], timeoutMs: number): Promise<T> {
  const res = await within(fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }), timeoutMs);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
  return body.result as T;
}

const lamportsAsSol = (l: bigint) => `${l / 1_000_000_000n}.${(l % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '') || '0'}`;

/**
 * A Solana cluster: the RPC answers, serves the configured genesis (the cluster's identity), its
 * slot advances; and the SOL_APPROVE_XFER delegate holds enough SOL for its transactions' fees.
 * (No clock check: block times are optional on Solana RPCs, and the watcher keys on slots.)
 */
export async function checkSolanaCluster(c: SolanaChainConfig, delegate: string | undefined, opts: DoctorOptions): Promise<CheckResult[]> {
  const name = `solana ${c.chainId} rpc ${redactUrl(c.rpcUrl)}`;
  const t = opts.callTimeoutMs;
  const out: CheckResult[] = [];
  try {
    const genesis = await rpc<string>(c.rpcUrl, 'getGenesisHash', [], t);
    if (genesis !== c.genesisHash) {
      out.push({ name, status: 'fail', detail: `serves the cluster with genesis ${genesis}, not ${c.genesisHash}: wrong URL or wrong cluster` });
    } else {
      const first = await rpc<number>(c.rpcUrl, 'getSlot', [{ commitment: 'confirmed' }], t);
      const start = Date.now();
      let slot = first;
      while (slot <= first && Date.now() - start < opts.headTimeoutMs) {
        await new Promise((r) => setTimeout(r, Math.min(500, Math.max(50, opts.headTimeoutMs / 20))));
        slot = await rpc<number>(c.rpcUrl, 'getSlot', [{ commitment: 'confirmed' }], t);
      }
      out.push(
        slot > first
          ? { name, status: 'ok', detail: `genesis ${genesis.slice(0, 8)}…, slot ${slot} advancing`, data: { slot } }
          : { name, status: 'fail', detail: `slot stuck at ${first} for ${(opts.headTimeoutMs / 1000).toFixed(0)} s: the node is not following the cluster`, data: { slot } },
      );
    }
  } catch (err) {
    out.push({ name, status: 'fail', detail: `unreachable: ${scrub((err as Error).message, c.rpcUrl)}` });
  }
  if (delegate) {
    const bname = `solana ${c.chainId} delegate balance`;
    if (out[0]!.status === 'fail' && /unreachable|genesis/.test(out[0]!.detail)) {
      out.push({ name: bname, status: 'skip', detail: 'the cluster did not answer as configured' });
    } else {
      try {
        const { value } = await rpc<{ value: number }>(c.rpcUrl, 'getBalance', [delegate, { commitment: 'confirmed' }], t);
        const bal = BigInt(value);
        const data = { delegate, balance_lamports: bal.toString(), min_lamports: opts.minSolLamports.toString() };
        const what = `${delegate} holds ${lamportsAsSol(bal)} SOL`;
        out.push(
          bal >= opts.minSolLamports
            ? { name: bname, status: 'ok', detail: `${what}; minimum ${lamportsAsSol(opts.minSolLamports)}`, data }
            : { name: bname, status: 'fail', detail: `${what}: below ${lamportsAsSol(opts.minSolLamports)} (--min-sol-balance): pulls fail once it cannot pay their fees`, data },
        );
      } catch (err) {
        out.push({ name: bname, status: 'fail', detail: `could not read: ${scrub((err as Error).message, c.rpcUrl)}` });
      }
    }
  }
  return out;
}
