import { ConfigError } from './errors.ts';
import type { SolanaChainConfig, SolanaChainFile } from './schema.ts';

/** Token program ids (the only two an SPL stablecoin mint can belong to). */
export const SOLANA_TOKEN_PROGRAMS = {
  'spl-token': 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'token-2022': 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
} as const;

/**
 * Well-known Solana clusters by genesis hash: a display name and explorer (the explorer serves a
 * transaction at `<url>/tx/<signature>`). Mints are never guessed, as for EVM tokens.
 */
export const KNOWN_SOLANA_CLUSTERS: Readonly<Record<string, { name: string; explorer_url: string }>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': { name: 'Solana', explorer_url: 'https://explorer.solana.com' },
};

/** CAIP-2 id of a Solana cluster: the namespace `solana` and the first 32 characters of its genesis hash. */
export function solanaNetwork(genesisHash: string): string {
  return `solana:${genesisHash.slice(0, 32)}`;
}

export function solanaChainFromFile(c: SolanaChainFile, i: number): SolanaChainConfig {
  const known = KNOWN_SOLANA_CLUSTERS[c.genesis_hash];
  const symbols = new Set<string>();
  c.tokens.forEach((t, j) => {
    if (symbols.has(t.symbol)) throw new ConfigError(`chains.${i}.tokens.${j}.symbol`, `duplicate symbol ${t.symbol}`);
    symbols.add(t.symbol);
  });
  const explorerUrl = (c.explorer_url ?? known?.explorer_url)?.replace(/\/+$/, '');
  return {
    kind: 'solana',
    chainId: c.chain_id,
    name: c.name ?? known?.name ?? `Solana ${c.genesis_hash.slice(0, 8)}`,
    ...(explorerUrl ? { explorerUrl } : {}),
    rpcUrl: c.rpc_url,
    genesisHash: c.genesis_hash,
    network: solanaNetwork(c.genesis_hash),
    confirmCommitment: c.confirm_commitment ?? 'confirmed',
    finalityCommitment: 'finalized',
    pollIntervalMs: c.poll_interval_ms ?? 1000,
    tokens: c.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, programId: SOLANA_TOKEN_PROGRAMS[t.program] })),
  };
}
