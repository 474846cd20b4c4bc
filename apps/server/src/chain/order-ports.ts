import type { Config } from '../config/schema.ts';
import type { FinalityRule } from '../orders/finality.ts';
import type { OrderPorts } from '../orders/ports.ts';
import { kindOfChain, normalizeSolanaAddress } from './addresses.ts';
import { chainById, flowsFailedAtExpiry } from './registry.ts';

/** The chain families' side of the order service's ports (orders/ports.ts), wired by main.ts. */
export function chainOrderPorts(config: Pick<Config, 'chains' | 'solanaChains'>): Omit<OrderPorts, 'delegate'> {
  return {
    chainKind: (chainId) => kindOfChain(config, chainId),
    isSolanaAddress: (raw) => normalizeSolanaAddress(raw) !== undefined,
    flowsFailedAtExpiry,
    finalityRule: (chainId) => finalityRule(config, chainId),
  };
}

/** The rule of a configured chain, by its family's depth policy; undefined for an unknown chain. */
export function finalityRule(config: Pick<Config, 'chains' | 'solanaChains'>, chainId: number): FinalityRule | undefined {
  const c = chainById(config, chainId);
  if (!c) return undefined;
  const policy = c.family.depth(c.chain);
  if (policy.unit === 'blocks') return { unit: 'blocks', needed: policy.invoice };
  const ask = c.family.transactionFinal;
  if (!ask) return undefined;
  return { unit: 'commitment', level: policy.invoice, isFinal: (h) => ask(c.chain, h) };
}
