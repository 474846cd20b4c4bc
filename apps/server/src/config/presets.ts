/**
 * Chain presets of the interface's six chains, and display facts of well-known chains.
 *
 * Two uses, kept apart on purpose:
 * - **Depth defaults** (`confirmations`, `finality_confirmations`, `poll_interval_ms`, `name`) apply
 *   to any configured chain with a listed id, as they always did.
 * - **Tokens** apply only when the operator writes `"preset": <id>`: a contract address is where
 *   payers' money goes, so it is never taken silently. A preset chain is checked against the chain
 *   at start-up (chain/evm/preset-check.ts: chain id of every RPC URL, code at each address,
 *   `decimals()`, EIP-3009 / EIP-2612 / EIP-712 facts) and refused when they disagree. What the
 *   public record leaves uncertain is marked `'read'` and taken from the chain at start-up.
 *
 * Depths: `confirmations` (PAYMENT_CONFIRMED) follows Circle's published confirmation table for
 * USDC deposits (https://developers.circle.com/stablecoins/blockchain-confirmations) where Circle
 * lists the chain, else the chain's own finality rule; `finality_confirmations` (INVOICED, fee
 * captured) is the chain's finality expressed as a depth. Tollgate counts depth as head − block + 1.
 */

type Capability = boolean | 'read';

export interface PresetToken {
  symbol: string;
  address: `0x${string}`;
  decimals: number;
  /** EIP-3009 transferWithAuthorization; 'read': probed at start-up (`authorizationState`). */
  eip3009: Capability;
  /** EIP-2612 permit; 'read': probed at start-up (`nonces`, `DOMAIN_SEPARATOR`). */
  eip2612: Capability;
  /** EIP-712 domain name/version; 'read': taken from the token at start-up (`name()`, `version()`). */
  eip712: { name: string; version: string } | 'read' | 'none';
}

export interface ChainPreset {
  name: string;
  confirmations: number;
  finality_confirmations: number;
  poll_interval_ms: number;
  explorer_url?: string;
  /** The preset's tokens (used only with `"preset": <id>`). */
  tokens?: readonly PresetToken[];
}

// Circle's native USDC on Ethereum, Polygon PoS and Arbitrum One: Circle's list of USDC contract
// addresses (https://developers.circle.com/stablecoins/usdc-contract-addresses), the same in
// coinbase/x402 typescript/packages/mechanisms/evm/src/shared/defaultAssets.ts. FiatTokenV2 has
// EIP-3009 and EIP-2612 with the domain "USD Coin" / "2" (its on-chain DOMAIN_SEPARATOR rebuilds
// from that name and version).
const CIRCLE_USDC = { symbol: 'USDC', decimals: 6, eip3009: true, eip2612: true, eip712: { name: 'USD Coin', version: '2' } } as const;

export const CHAIN_PRESETS: Readonly<Record<number, ChainPreset>> = {
  1: {
    name: 'Ethereum',
    // Circle: 12 blocks (~3 min). Finality: two epochs (64 slots); CCTP's standard transfer waits
    // for it (~65 blocks, https://developers.circle.com/cctp/required-block-confirmations).
    confirmations: 12,
    finality_confirmations: 65,
    poll_interval_ms: 4000,
    explorer_url: 'https://etherscan.io',
    tokens: [
      { ...CIRCLE_USDC, address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
      // Tether's supported-protocols page (https://tether.to/en/supported-protocols). TetherToken
      // predates EIP-2612/3009 and its transfer returns no value; no EIP-712 domain.
      { symbol: 'USDT', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6, eip3009: false, eip2612: false, eip712: 'none' },
    ],
  },
  137: {
    name: 'Polygon PoS',
    // Circle: 50 blocks (~2 min). Finality: milestones give deterministic finality (Polygon PIP-11,
    // https://forum.polygon.technology/t/pip-11-deterministic-finality-via-milestones); 128 blocks
    // stays past the milestone lag with margin.
    confirmations: 50,
    finality_confirmations: 128,
    poll_interval_ms: 2000,
    explorer_url: 'https://polygonscan.com',
    tokens: [
      // Native USDC, not the bridged USDC.e 0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174 (domain
      // "USD Coin (PoS)", no transferWithAuthorization): Circle's address list above.
      { ...CIRCLE_USDC, address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359' },
      // USDT, upgraded in place to USDT0 (https://docs.usdt0.to, deployments; OpenZeppelin's USDT0
      // audit). Permit uses a salted domain without chainId; whether transferWithAuthorization is
      // live and the current domain name/version are not settled in public sources: read at start-up.
      { symbol: 'USDT', address: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', decimals: 6, eip3009: 'read', eip2612: true, eip712: 'read' },
    ],
  },
  42161: {
    name: 'Arbitrum One',
    // Circle's older table: 300 blocks; its newest states Arbitrum in Ethereum blocks (12), which a
    // depth on Arbitrum cannot express. Hard finality is the `finalized` tag (batch final on L1,
    // https://docs.arbitrum.io "finality and reorgs"); Tollgate counts depths, so 600 is a floor.
    confirmations: 300,
    finality_confirmations: 600,
    poll_interval_ms: 1000,
    explorer_url: 'https://arbiscan.io',
    tokens: [
      // Native USDC (Circle's list); not the bridged USDC.e 0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8.
      { ...CIRCLE_USDC, address: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831' },
      // USDT0 (upgraded USDT, same address): https://docs.usdt0.to deployments; trustwallet/assets
      // blockchains/arbitrum; EIP-3009 and EIP-2612 with domain "USD₮0" / "1".
      { symbol: 'USDT', address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', decimals: 6, eip3009: true, eip2612: true, eip712: { name: 'USD₮0', version: '1' } },
    ],
  },
  56: {
    name: 'BNB Smart Chain',
    // Circle's CCTP table: 3 blocks. Fast finality (BEP-126,
    // https://github.com/bnb-chain/BEPs/blob/master/BEPs/BEP126.md): block n is final once n+2 is
    // built, i.e. at depth 3.
    confirmations: 3,
    finality_confirmations: 3,
    poll_interval_ms: 3000,
    explorer_url: 'https://bscscan.com',
    tokens: [
      // Binance-Peg tokens (Circle and Tether do not issue on BNB Chain), 18 decimals:
      // https://bscscan.com/token/0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d and
      // https://bscscan.com/token/0x55d398326f99059fF775485246999027B3197955; Stargate's token
      // registry lists the same. No EIP-3009. One public source claims permit on USDC, others report
      // `nonces()` reverting: read at start-up.
      { symbol: 'USDC', address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18, eip3009: false, eip2612: 'read', eip712: 'none' },
      { symbol: 'USDT', address: '0x55d398326f99059fF775485246999027B3197955', decimals: 18, eip3009: false, eip2612: false, eip712: 'none' },
    ],
  },
  1088: {
    name: 'Metis Andromeda',
    // Not on Circle's lists. A block is final after sequencer rotation and 2/3 consensus
    // (https://docs.metis.io, transaction cycle); L1 batches follow in ~30 min. 20/40 blocks.
    confirmations: 20,
    finality_confirmations: 40,
    poll_interval_ms: 2000,
    explorer_url: 'https://andromeda-explorer.metis.io',
    // Bridged m.USDC / m.USDT (symbols here without "m."): Netswap's and MaiaDAO's token lists,
    // Stargate's registry. Their EIP-3009/2612 support is not documented: read at start-up. GOAT's
    // public service lists Metis with USDT only, DIRECT mode (GOATNetwork/goat-docs
    // pages/builders/x402.mdx).
    tokens: [
      { symbol: 'USDC', address: '0xEA32A96608495e54156Ae48931A7c20f0dcc1a21', decimals: 6, eip3009: 'read', eip2612: 'read', eip712: 'read' },
      { symbol: 'USDT', address: '0xbB06DCA3AE6887fAbF931640f67cab3e3a16F4dC', decimals: 6, eip3009: 'read', eip2612: 'read', eip712: 'read' },
    ],
  },
  2345: {
    name: 'GOAT Network',
    // Not on Circle's lists. Sequencer confirmation in 2–4 s, anchored to Bitcoin in 10–60 min
    // (GOAT docs); GOAT's own service treats thresholds as configuration. 12/24 blocks.
    confirmations: 12,
    finality_confirmations: 24,
    poll_interval_ms: 3000,
    explorer_url: 'https://explorer.goat.network',
    tokens: [
      // USDC.e (Stargate-bridged, Circle's bridged-USDC standard) and USDT (Stargate OFT):
      // GOATNetwork/goat-name-service tasks/readme.md; Oku's chain config. The USDC.e domain
      // "Bridged USDC (Stargate)" / "2" comes from a third-party read: read at start-up. USDT's
      // capabilities are undocumented: read at start-up.
      { symbol: 'USDC', address: '0x3022b87ac063DE95b1570F46f5e470F8B53112D8', decimals: 6, eip3009: true, eip2612: true, eip712: 'read' },
      { symbol: 'USDT', address: '0xE1AD845D93853fff44990aE0DcecD8575293681e', decimals: 6, eip3009: 'read', eip2612: 'read', eip712: 'read' },
    ],
  },
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

/** The ids a `"preset"` key accepts (chains with tokens). */
export const PRESET_IDS: readonly number[] = Object.entries(CHAIN_PRESETS)
  .filter(([, p]) => p.tokens)
  .map(([id]) => Number(id));
