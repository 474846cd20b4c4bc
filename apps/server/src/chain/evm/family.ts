import type { ChainConfig } from '../../config/schema.ts';
import { createEvmTxLookup } from '../../mpp/chain.ts';
import { normalizeEvmAddress } from '../addresses.ts';
import type { ChainFamily } from '../port.ts';
import { createChainLogger } from './context.ts';
import { createChainWatcher, runChainWatcher } from './watcher.ts';

/**
 * The EVM family on the chain port: thin wrappers over the existing modules (watcher.ts, the viem
 * address check, mpp/chain.ts), with the behaviour they had before the port existed.
 */
export const evmFamily: ChainFamily<ChainConfig> = {
  kind: 'evm',
  directFlow: 'ERC20_DIRECT',
  network: (chain) => `eip155:${chain.chainId}`,
  normalizeAddress: normalizeEvmAddress,
  tokens: (chain) => chain.tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals })),
  directPayTo: async (_chain, wallet) => wallet.toLowerCase(),
  depth: (chain) => ({ unit: 'blocks', confirm: chain.confirmations, invoice: chain.finalityConfirmations }),
  startWatcher: (chain, deps, hooks) =>
    runChainWatcher(
      createChainWatcher({
        ...(hooks.onTick ? { onTick: hooks.onTick } : {}),
        chain,
        db: deps.db,
        clock: deps.clock,
        log: createChainLogger(hooks.logLevel, { component: 'chain-watcher', chain_id: chain.chainId }),
      }),
    ),
  txLookup: (chain) => createEvmTxLookup(chain),
  settles: (chain) => chain.settlementContract !== undefined,
};
