import { isAddress, type Address } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import type { SolanaChainConfig } from '../../config/schema.ts';
import type { ChainFamily } from '../port.ts';

/**
 * The Solana family on the chain port. Addresses are base58 public keys (32 bytes), stored as
 * given (base58 is case-sensitive: no normalisation beyond the check). A DIRECT payment arrives in
 * the merchant wallet's associated token account of the mint (with the mint's token program).
 * Depth is a commitment level. Machine payments and DELEGATE settlement are not served yet.
 */
export const solanaFamily: ChainFamily<SolanaChainConfig> = {
  kind: 'solana',
  network: (chain) => chain.network,
  normalizeAddress: (raw) => (isAddress(raw) ? raw : undefined),
  tokens: (chain) => chain.tokens.map((t) => ({ symbol: t.symbol, address: t.mint, decimals: t.decimals })),
  async directPayTo(chain, wallet, token) {
    const t = chain.tokens.find((x) => x.mint === token.address);
    if (!t) throw new Error(`mint ${token.address} is not configured on chain ${chain.chainId}`);
    const [ata] = await findAssociatedTokenPda({ owner: wallet as Address, mint: t.mint as Address, tokenProgram: t.programId as Address });
    return ata;
  },
  depth: (chain) => ({ unit: 'commitment', confirm: chain.confirmCommitment, invoice: chain.finalityCommitment }),
  startWatcher() {
    // The order-attribution half (SOL_DIRECT orders, docs/solana.md) is not wired yet; the registry
    // therefore lists no Solana chain, and this is never reached.
    throw new Error('the Solana watcher is not wired into orders yet');
  },
  settles: () => false,
};
