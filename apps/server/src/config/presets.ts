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
