// Shared fixtures of the DELEGATE tests (delegate-*.test.ts): an anvil chain with TestUSDC
// (EIP-3009) and TestUSDT (no EIP-3009, `tether` flavour), the settlement contract and example
// adapter deployed, a Tollgate with SETTLEMENT_KEY, and a DELEGATE merchant.
import { startDevChain, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import type { ChainConfig } from '../../src/config/schema.ts';
import type { Backend } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { withSettlement, type DelegateSetup } from '../helpers/settlement.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import type { Role } from '../../src/main.ts';

let nextChainId = 60_000 + Math.floor(Math.random() * 1000) * 10;

export interface DelegateStack {
  dev: DevChain;
  setup: DelegateSetup;
  chain: ChainConfig;
  s: TestServer;
  close(): Promise<void>;
}

/** Anvil + contracts + a Tollgate (all roles unless `role` says otherwise). */
export async function startDelegateStack(backend: Backend, opts: { role?: Role; chain?: Partial<ChainConfig> } = {}): Promise<DelegateStack> {
  const dev = await startDevChain({ chainId: nextChainId++, usdt: 'tether' });
  const base: ChainConfig = {
    chainId: dev.chainId,
    name: 'Test',
    rpcUrl: dev.rpcUrl,
    confirmations: 1,
    finalityConfirmations: 2,
    pollIntervalMs: 50,
    tokens: dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase() as Hex, decimals: t.decimals, eip3009: t.eip3009 })),
    ...opts.chain,
  };
  const setup = await withSettlement(dev, base);
  const s = await startTestServer({ backend, chains: [setup.chain], config: { settlement: setup.signer }, ...(opts.role ? { role: opts.role } : {}) });
  return {
    dev,
    setup,
    chain: setup.chain,
    s,
    async close() {
      await s.close();
      await dev.stop();
    },
  };
}

/** A DELEGATE merchant with wallets for every token and a fee balance; `callback` registers the example adapter. */
export async function setupDelegateMerchant(st: DelegateStack, opts: { callback?: boolean } = {}): Promise<Creds> {
  const m = await st.s.createMerchant({ name: 'Delegate Merchant', topUp: '10.00', body: { receive_type: 'DELEGATE' } });
  for (const t of st.chain.tokens) {
    const r = await st.s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: st.chain.chainId, token_symbol: t.symbol, address: MERCHANT_WALLET });
    if (r.status !== 201) throw new Error(`wallet: ${r.status} ${r.text}`);
  }
  if (opts.callback !== false) {
    const a = st.setup.adapter!;
    const r = await st.s.admin('POST', `/admin/v1/merchants/${m.merchantId}/callbacks`, {
      chain_id: st.chain.chainId,
      callback_contract: a.address,
      eip712_name: a.eip712Name,
      eip712_version: a.eip712Version,
    });
    if (r.status !== 201) throw new Error(`callback: ${r.status} ${r.text}`);
  }
  return m;
}
