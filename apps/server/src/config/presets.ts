/**
 * Confirmation defaults per well-known chain. Depths follow Circle's published confirmation table
 * for USDC (Ethereum 12 … Arbitrum 300 …); finality is a deeper second threshold at which an order
 * is invoiced and its fee captured. Token addresses are deliberately absent: a wrong guessed
 * contract address would send payers' money to the wrong place, so tokens always come from config.
 */
export interface ChainPreset {
  name: string;
  confirmations: number;
  finality_confirmations: number;
  poll_interval_ms: number;
}

export const CHAIN_PRESETS: Readonly<Record<number, ChainPreset>> = {
  1: { name: 'Ethereum', confirmations: 12, finality_confirmations: 64, poll_interval_ms: 4000 },
  137: { name: 'Polygon PoS', confirmations: 50, finality_confirmations: 128, poll_interval_ms: 2000 },
  42161: { name: 'Arbitrum One', confirmations: 300, finality_confirmations: 600, poll_interval_ms: 1000 },
  56: { name: 'BNB Smart Chain', confirmations: 15, finality_confirmations: 30, poll_interval_ms: 3000 },
  1088: { name: 'Metis Andromeda', confirmations: 20, finality_confirmations: 40, poll_interval_ms: 2000 },
  2345: { name: 'GOAT Network', confirmations: 12, finality_confirmations: 24, poll_interval_ms: 3000 },
  31337: { name: 'Local (anvil)', confirmations: 1, finality_confirmations: 2, poll_interval_ms: 200 },
};

/**
 * Display names and block explorers of well-known chains (the hosted page shows the network's name
 * and links the payer's transaction). Separate from CHAIN_PRESETS: knowing a chain's explorer is no
 * reason to guess its confirmation depths, so these chains still need them in the config file.
 * Every explorer here serves a transaction at `<url>/tx/<hash>`.
 */
export const KNOWN_CHAINS: Readonly<Record<number, { name: string; explorer_url: string }>> = {
  1: { name: 'Ethereum', explorer_url: 'https://etherscan.io' },
  10: { name: 'OP Mainnet', explorer_url: 'https://optimistic.etherscan.io' },
  56: { name: 'BNB Smart Chain', explorer_url: 'https://bscscan.com' },
  137: { name: 'Polygon PoS', explorer_url: 'https://polygonscan.com' },
  1088: { name: 'Metis Andromeda', explorer_url: 'https://andromeda-explorer.metis.io' },
  2345: { name: 'GOAT Network', explorer_url: 'https://explorer.goat.network' },
  8453: { name: 'Base', explorer_url: 'https://basescan.org' },
  42161: { name: 'Arbitrum One', explorer_url: 'https://arbiscan.io' },
  43114: { name: 'Avalanche C-Chain', explorer_url: 'https://snowtrace.io' },
  80002: { name: 'Polygon Amoy', explorer_url: 'https://amoy.polygonscan.com' },
  84532: { name: 'Base Sepolia', explorer_url: 'https://sepolia.basescan.org' },
  421614: { name: 'Arbitrum Sepolia', explorer_url: 'https://sepolia.arbiscan.io' },
  11155111: { name: 'Sepolia', explorer_url: 'https://sepolia.etherscan.io' },
  11155420: { name: 'OP Sepolia', explorer_url: 'https://sepolia-optimism.etherscan.io' },
};
