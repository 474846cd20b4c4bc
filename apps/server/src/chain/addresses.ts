import { isAddress as isSolanaAddress } from '@solana/addresses';
import { isAddress as isEvmAddress } from 'viem';
import type { Config } from '../config/schema.ts';

/**
 * Address rules per chain family (pure; the families' `normalizeAddress` and the services that
 * only need the rule share it without loading a watcher). EVM: EIP-55 checked when mixed case,
 * stored lowercase. Solana: a base58 32-byte key, case-sensitive, stored as given.
 */
export function normalizeEvmAddress(raw: string): string | undefined {
  return isEvmAddress(raw) ? raw.toLowerCase() : undefined;
}

export function normalizeSolanaAddress(raw: string): string | undefined {
  return isSolanaAddress(raw) ? raw : undefined;
}

/** The family of a configured chain id, or undefined when no chain has it. */
export function kindOfChain(config: Pick<Config, 'chains' | 'solanaChains'>, chainId: number): 'evm' | 'solana' | undefined {
  if (config.chains.some((c) => c.chainId === chainId)) return 'evm';
  if (config.solanaChains?.some((c) => c.chainId === chainId)) return 'solana';
  return undefined;
}
