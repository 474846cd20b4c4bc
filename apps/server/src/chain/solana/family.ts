import type { Address, Signature } from '@solana/kit';
import { normalizeSolanaAddress } from '../addresses.ts';
import type { SolanaChainConfig } from '../../config/schema.ts';
import type { Worker } from '../../workers.ts';
import type { ChainFamily } from '../port.ts';
import { transferRequestUrl } from './pay-url.ts';
import { referenceOf } from './reference.ts';
import { createChainLogger } from '../evm/context.ts';
import type { SolanaRpc } from './rpc.ts';
import { FLOW as APPROVE_FLOW } from './delegate/repo.ts';

// The RPC client, transaction builders, watcher and settlement load @solana/kit whole and
// @solana-program/token (~19 MB of RSS in a fresh Node 24, BENCHMARKS.md "Production runtime"):
// they are imported on first use, so a gateway with no Solana cluster configured never loads
// them. What runs for every gateway (address checks, base58, the Solana Pay URL) imports the small
// @solana/addresses and @solana/codecs-strings packages instead.

/** A worker whose module is still loading: `stop()` waits for it, then stops it. */
function lazyWorker(name: string, start: Promise<Worker>): Worker {
  return { name, stop: async () => (await start).stop() };
}

/** One RPC client per configured cluster for request-time reads (transaction requests). */
const clients = new WeakMap<SolanaChainConfig, SolanaRpc>();
async function rpcOf(chain: SolanaChainConfig): Promise<SolanaRpc> {
  let c = clients.get(chain);
  if (!c) {
    const { createSolanaRpcClient } = await import('./rpc.ts');
    clients.set(chain, (c = clients.get(chain) ?? createSolanaRpcClient(chain.rpcUrl, 5000)));
  }
  return c;
}

/** Wallet Standard chain names of the public clusters, by genesis hash; any other cluster is `solana:localnet`. */
const WALLET_CHAINS: Readonly<Record<string, string>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': 'solana:mainnet',
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG: 'solana:devnet',
  '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY': 'solana:testnet',
};

/**
 * The Solana family on the chain port. Addresses are base58 public keys (32 bytes), stored as
 * given (base58 is case-sensitive: no normalisation beyond the check). A DIRECT payment arrives in
 * the merchant wallet's associated token account of the mint (with the mint's token program).
 * Depth is a commitment level. Machine payments and DELEGATE settlement are not served yet.
 */
export const solanaFamily: ChainFamily<SolanaChainConfig> = {
  kind: 'solana',
  directFlow: 'SOL_DIRECT',
  network: (chain) => chain.network,
  normalizeAddress: normalizeSolanaAddress,
  tokens: (chain) => chain.tokens.map((t) => ({ symbol: t.symbol, address: t.mint, decimals: t.decimals })),
  async directPayTo(chain, wallet, token) {
    const t = chain.tokens.find((x) => x.mint === token.address);
    if (!t) throw new Error(`mint ${token.address} is not configured on chain ${chain.chainId}`);
    const { findAssociatedTokenPda } = await import('@solana-program/token');
    const [ata] = await findAssociatedTokenPda({ owner: wallet as Address, mint: t.mint as Address, tokenProgram: t.programId as Address });
    return ata;
  },
  // The payer's wallet pays the merchant's WALLET (it derives the token account) the exact amount,
  // carrying the order's reference key: what attributes the transfer (attribution.ts).
  // A transfer request only for SOL_DIRECT: a SOL_APPROVE_XFER payer approves, never transfers.
  paymentUrl: (_chain, order) =>
    order.flow !== undefined && order.flow !== 'SOL_DIRECT'
      ? undefined
      : transferRequestUrl({
          recipient: order.pay_to_address,
          amount: BigInt(order.amount_wei),
          decimals: order.decimals,
          splToken: order.token_contract,
          references: [referenceOf(order.id)],
          message: `Order ${order.dapp_order_id}`.slice(0, 100),
        }),
  async paymentTransaction(chain, input) {
    const { transferTransaction } = await import('./tx-request.ts');
    return transferTransaction(await rpcOf(chain), chain, input);
  },
  walletChain: (chain) => WALLET_CHAINS[chain.genesisHash] ?? 'solana:localnet',
  async approvalTerms(chain, o) {
    if (o.flow !== APPROVE_FLOW) return undefined;
    const t = chain.tokens.find((x) => x.mint === o.token_contract);
    if (!t) return undefined;
    return {
      instruction: 'approveChecked',
      delegate: o.pay_to_address,
      mint: t.mint,
      tokenProgram: t.programId,
      sourceTokenAccount: await (await import('./delegate/approval.ts')).payerTokenAccount(chain, o),
      amount: o.amount_wei,
      decimals: o.decimals,
      reference: referenceOf(o.id),
    };
  },
  startSettlement(chain, deps) {
    const key = deps.config.solanaDelegate;
    if (!key) return undefined;
    const log = createChainLogger(deps.config.logLevel, { component: 'solana-settlement', chain_id: chain.chainId });
    const start = import('./delegate/worker.ts').then(({ runSolanaSettlement, SolanaSettlementWorker }) => runSolanaSettlement(new SolanaSettlementWorker({ chain, key, db: deps.db, clock: deps.clock, log }), chain.pollIntervalMs));
    return lazyWorker(`solana-settlement-solana-settlement:${chain.chainId}`, start);
  },
  failedAtExpiry: [APPROVE_FLOW],
  // Every Solana flow: each order has its own reference key (docs/solana.md).
  outsideLiveTerms: ['SOL_DIRECT', APPROVE_FLOW],
  depth: (chain) => ({ unit: 'commitment', confirm: chain.confirmCommitment, invoice: chain.finalityCommitment }),
  // A late or under-payment may be accepted days after it landed: searchTransactionHistory, since a
  // node's status cache holds only the recent slots.
  async transactionFinal(chain, txHash) {
    const { value } = await (await rpcOf(chain)).getSignatureStatuses([txHash as Signature], { searchTransactionHistory: true }).send();
    return value[0]?.err === null && value[0].confirmationStatus === 'finalized';
  },
  startWatcher(chain, deps, hooks) {
    const log = createChainLogger(hooks.logLevel, { component: 'solana-watcher', chain_id: chain.chainId });
    const start = import('./watcher.ts').then(({ runSolanaWatcher, SolanaWatcher }) => runSolanaWatcher(new SolanaWatcher({ chain, db: deps.db, clock: deps.clock, ...(hooks.onTick ? { onTick: hooks.onTick } : {}), log })));
    return lazyWorker(`solana-watcher:${chain.chainId}`, start);
  },
  settles: () => false,
};
