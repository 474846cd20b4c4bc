import type { Config } from '../config/schema.ts';
import type { FinalityRule } from '../orders/finality.ts';
import type { OrderPorts, PaymentPlanner } from '../orders/ports.ts';
import { kindOfChain } from './addresses.ts';
import type { ChainKind } from './port.ts';
import { chainById, flowsFailedAtExpiry, flowsOutsideLiveTerms } from './registry.ts';

/**
 * The chain families' side of the order service's ports (orders/ports.ts), wired by main.ts with
 * one payment planner per family. A chain no family has is answered by the EVM planner, the
 * default family (config.chains), so its request is refused as it always was: the payer checked by
 * the EVM rule, then chain_not_supported.
 */
export function chainOrderPorts(config: Pick<Config, 'chains' | 'solanaChains'>, planners: Readonly<Record<ChainKind, PaymentPlanner>>): Omit<OrderPorts, 'signRequests'> {
  return {
    plannerFor: (chainId) => planners[kindOfChain(config, chainId) ?? 'evm'],
    flowsFailedAtExpiry,
    flowsOutsideLiveTerms,
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
