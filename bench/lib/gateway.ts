import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTollgate, type TollgateProcess } from '../../apps/server/test/helpers/process.ts';
import { adminCall, type Reply } from '../../apps/server/test/helpers/reliability.ts';
import { TEST_ADMIN_TOKEN } from '../../apps/server/test/helpers/server.ts';

/** A setup call that did not answer as expected stops the benchmark before any load. */
function ok(r: Reply, status: number, what: string): any {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text}`);
  return r.body;
}

export interface BenchMerchant {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
}

export interface BenchGateway {
  tg: TollgateProcess;
  url: string;
  /** A merchant with a USDC wallet on chain 31337 and a fee balance for millions of orders. */
  merchant(name: string): Promise<BenchMerchant>;
}

/**
 * Tollgate as an operator runs it (`serve --role api` in a child process) on `databaseUrl`, with
 * one configured chain whose RPC is never reached (creating orders needs none), and `env` added.
 * `bin` runs another checkout's `apps/server/bin/tollgate.js` (BENCH_BASELINE: before/after in one run),
 * `node` another Node binary.
 */
export async function startGateway(databaseUrl: string, opts: { env?: Record<string, string>; nodeArgs?: string[]; bin?: string; node?: string; startTimeoutMs?: number } = {}): Promise<BenchGateway> {
  const cfg = join(mkdtempSync(join(tmpdir(), 'tg-bench-')), 'tollgate.json');
  writeFileSync(
    cfg,
    JSON.stringify({
      environment: 'test',
      chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:1', tokens: [{ symbol: 'USDC', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', decimals: 6 }] }],
    }),
  );
  const tg = spawnTollgate(
    ['serve', '--role', 'api'],
    { DATABASE_URL: databaseUrl, TOLLGATE_CONFIG: cfg, MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', LOG_LEVEL: 'warn', ...opts.env },
    undefined,
    opts.nodeArgs ?? [],
    opts.bin,
    opts.node,
  );
  const url = (await tg.waitFor(/listening on (http:\/\/\S+)/, opts.startTimeoutMs ?? 30_000))[1]!;
  return {
    tg,
    url,
    async merchant(name) {
      const m = ok(await adminCall(url, 'POST', '/admin/v1/merchants', { name }), 201, 'create merchant');
      ok(await adminCall(url, 'POST', `/admin/v1/merchants/${m.merchant_id}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: '0x' + '11'.repeat(20) }), 201, 'add wallet');
      ok(await adminCall(url, 'POST', `/admin/v1/merchants/${m.merchant_id}/fee-balance/top-ups`, { amount: '10000000' }), 200, 'top up');
      return { merchantId: m.merchant_id, apiKey: m.api_key, apiSecret: m.api_secret };
    },
  };
}
