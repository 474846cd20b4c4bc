import type { Config } from '../config/schema.ts';
import type { OrderPorts } from '../orders/ports.ts';
import { kindOfChain, normalizeSolanaAddress } from './addresses.ts';
import { flowsFailedAtExpiry } from './registry.ts';

/** The chain families' side of the order service's ports (orders/ports.ts), wired by main.ts. */
export function chainOrderPorts(config: Pick<Config, 'chains' | 'solanaChains'>): Omit<OrderPorts, 'delegate'> {
  return {
    chainKind: (chainId) => kindOfChain(config, chainId),
    isSolanaAddress: (raw) => normalizeSolanaAddress(raw) !== undefined,
    flowsFailedAtExpiry,
  };
}
