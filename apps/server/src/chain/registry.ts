import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { Worker } from '../workers.ts';
import { evmFamily } from './evm/family.ts';
import { solanaFamily } from './solana/family.ts';
import type { ChainEntry, ChainFamily, WatcherHooks } from './port.ts';

/** A configured chain with the family that serves it. */
export interface ConfiguredChain {
  family: ChainFamily<ChainEntry>;
  chain: ChainEntry;
}

/** Every configured chain of every family, EVM first (the order `config.chains` always had). */
export function configuredChains(config: Pick<Config, 'chains' | 'solanaChains'>): ConfiguredChain[] {
  return [...config.chains.map((chain) => ({ family: evmFamily as unknown as ChainFamily<ChainEntry>, chain })), ...(config.solanaChains ?? []).map((chain) => ({ family: solanaFamily as unknown as ChainFamily<ChainEntry>, chain }))];
}

export function chainById(config: Pick<Config, 'chains' | 'solanaChains'>, chainId: number): ConfiguredChain | undefined {
  return configuredChains(config).find((c) => c.chain.chainId === chainId);
}

/** The settlement loops of families that settle themselves (Solana SOL_APPROVE_XFER), one per chain set up. */
export function startChainSettlements(deps: { config: Config; db: Database; clock: Clock }): Worker[] {
  return configuredChains(deps.config).flatMap(({ family, chain }) => family.startSettlement?.(chain, deps) ?? []);
}

/** Flows whose unpaid orders their family's settlement fails at expiry (orders/repo.ts listExpirable skips them). */
export function flowsFailedAtExpiry(): string[] {
  return [evmFamily, solanaFamily].flatMap((f) => f.failedAtExpiry ?? []);
}

/** Flows whose live orders never clash on terms (orders/supersede.ts leaves them out). */
export function flowsOutsideLiveTerms(): string[] {
  return [evmFamily, solanaFamily].flatMap((f) => f.outsideLiveTerms ?? []);
}

/** One watcher loop per configured chain, whatever its family (the composition root calls this). */
export function startChainWatchers(deps: { config: Pick<Config, 'chains' | 'solanaChains' | 'logLevel'>; db: Database; clock: Clock }, hooks: Omit<WatcherHooks, 'logLevel'> = {}): Worker[] {
  return configuredChains(deps.config).map(({ family, chain }) => family.startWatcher(chain, deps, { ...hooks, logLevel: deps.config.logLevel }));
}
