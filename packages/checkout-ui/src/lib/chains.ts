// Display names of well-known EVM chains. The public session view carries only chain ids; an
// unknown id is shown as "Chain <id>", never guessed.
const NAMES: Record<number, string> = {
  1: 'Ethereum',
  10: 'OP Mainnet',
  56: 'BNB Smart Chain',
  137: 'Polygon',
  1088: 'Metis',
  2345: 'GOAT Network',
  8453: 'Base',
  42161: 'Arbitrum One',
  43114: 'Avalanche C-Chain',
  11155111: 'Sepolia',
  84532: 'Base Sepolia',
  80002: 'Polygon Amoy',
  31337: 'Local test chain',
};

/** @example chainName(137) // => 'Polygon' */
export function chainName(chainId: number): string {
  return NAMES[chainId] ?? `Chain ${chainId}`;
}
