import type { Address, Signature } from '@solana/kit';
import { normalizeSolanaAddress } from '../addresses.ts';
import { findAssociatedTokenPda } from '@solana-program/token';
import type { SolanaChainConfig } from '../../config/schema.ts';
import type { ChainFamily } from '../port.ts';
import { transferRequestUrl } from './pay-url.ts';
import { referenceOf } from './reference.ts';
import { runSolanaWatcher, SolanaWatcher } from './watcher.ts';
import { createChainLogger } from '../evm/context.ts';
import { createSolanaRpcClient, type SolanaRpc } from './rpc.ts';
import { transferTransaction } from './tx-request.ts';
import { payerTokenAccount } from './delegate/approval.ts';
import { FLOW as APPROVE_FLOW } from './delegate/repo.ts';
import { runSolanaSettlement, SolanaSettlementWorker } from './delegate/worker.ts';

/** One RPC client per configured cluster for request-time reads (transaction requests). */
const clients = new WeakMap<SolanaChainConfig, SolanaRpc>();
function rpcOf(chain: SolanaChainConfig): SolanaRpc {
  let c = clients.get(chain);
  if (!c) clients.set(chain, (c = createSolanaRpcClient(chain.rpcUrl, 5000)));
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
    const [ata] = await findAssociatedTokenPda({ owner: wallet as Address, mint: t.mint as Address, tokenProgram: t.programId as Address });
    return ata;
  },
  // The payer's wallet pays the merchant's WALLET (it derives the token account) the exact amount,
  // carrying the order's reference key: what attributes the transfer (attribution.ts).
  // A transfer request only for SOL_DIRECT: a SOL_APPROVE_XFER payer approves, never transfers.
  paymentUrl: (_chain, order) =>
    order.flow !== undefined && order.flow !== 'SOL_DIRECT' ? undefined : transferRequestUrl({
      recipient: order.pay_to_address,
      amount: BigInt(order.amount_wei),
      decimals: order.decimals,
      splToken: order.token_contract,
      references: [referenceOf(order.id)],
      message: `Order ${order.dapp_order_id}`.slice(0, 100),
    }),
  paymentTransaction: (chain, input) => transferTransaction(rpcOf(chain), chain, input),
  walletChain: (chain) => WALLET_CHAINS[chain.genesisHash] ?? 'solana:localnet',
  // DELEGATE on Solana: the payer approves the gateway's delegate key (payToAddress) on its own
  // token account; the gateway pulls and settles (delegate/). Set up by SOLANA_DELEGATE_KEY.
  delegatePlan: (_chain, config) => (config.solanaDelegate ? { flow: APPROVE_FLOW, payToAddress: config.solanaDelegate.address } : undefined),
  async approvalTerms(chain, o) {
    if (o.flow !== APPROVE_FLOW) return undefined;
    const t = chain.tokens.find((x) => x.mint === o.token_contract);
    if (!t) return undefined;
    return {
      instruction: 'approveChecked',
      delegate: o.pay_to_address,
      mint: t.mint,
      tokenProgram: t.programId,
      sourceTokenAccount: await payerTokenAccount(chain, o),
      amount: o.amount_wei,
      decimals: o.decimals,
      reference: referenceOf(o.id),
    };
  },
  startSettlement: (chain, deps) =>
    deps.config.solanaDelegate
      ? runSolanaSettlement(
          new SolanaSettlementWorker({ chain, key: deps.config.solanaDelegate, db: deps.db, clock: deps.clock, log: createChainLogger(deps.config.logLevel, { component: 'solana-settlement', chain_id: chain.chainId }) }),
          chain.pollIntervalMs,
        )
      : undefined,
  failedAtExpiry: [APPROVE_FLOW],
  depth: (chain) => ({ unit: 'commitment', confirm: chain.confirmCommitment, invoice: chain.finalityCommitment }),
  // A late or under-payment may be accepted days after it landed: searchTransactionHistory, since a
  // node's status cache holds only the recent slots.
  async transactionFinal(chain, txHash) {
    const { value } = await rpcOf(chain).getSignatureStatuses([txHash as Signature], { searchTransactionHistory: true }).send();
    return value[0]?.err === null && value[0].confirmationStatus === 'finalized';
  },
  startWatcher: (chain, deps, hooks) =>
    runSolanaWatcher(
      new SolanaWatcher({
        chain,
        db: deps.db,
        clock: deps.clock,
        ...(hooks.onTick ? { onTick: hooks.onTick } : {}),
        log: createChainLogger(hooks.logLevel, { component: 'solana-watcher', chain_id: chain.chainId }),
      }),
    ),
  settles: () => false,
};
