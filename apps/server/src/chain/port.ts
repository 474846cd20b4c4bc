/**
 * The chain port: what orders, checkout, machine payments and settlement need from a chain family.
 * One folder per family implements it (`chain/evm`, `chain/solana`); `chain/registry.ts` picks the
 * implementation by the chain's kind, so a new family is a new folder, never a branch in a service.
 * Pure types: no I/O here.
 */
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { TxLookup } from '../mpp/chain.ts';
import type { Worker } from '../workers.ts';

export type ChainKind = 'evm' | 'solana';

/** What every family's parsed chain entry has in common. */
export interface ChainEntry {
  chainId: number;
  name: string;
  rpcUrl: string;
  pollIntervalMs: number;
  explorerUrl?: string;
}

/** A configured token in family-neutral terms. */
interface ChainToken {
  symbol: string;
  /** EVM: lowercase 0x contract; Solana: base58 mint */
  address: string;
  decimals: number;
}

/** When a payment counts: EVM in blocks on top of the transfer's block, Solana in commitment levels. */
type DepthPolicy = { unit: 'blocks'; confirm: number; invoice: number } | { unit: 'commitment'; confirm: 'confirmed' | 'finalized'; invoice: 'finalized' };

/** What a watcher loop reports after each tick (metrics: head lag per chain). */
export interface WatcherHooks {
  onTick?: (chainId: number, r: { kind: 'leader' | 'follower' | 'error' }, head: { number: bigint; timestamp: bigint } | undefined) => void;
  logLevel: string;
}

export interface ChainFamily<C extends ChainEntry = ChainEntry> {
  readonly kind: ChainKind;
  /** The flow of a DIRECT order on this family (the order's `flow`, docs/orders.md). */
  readonly directFlow: 'ERC20_DIRECT' | 'SOL_DIRECT';
  /** CAIP-2 id used in `network` / `destinationChain` fields (`eip155:1`, `solana:5eykt4Us…`). */
  network(chain: C): string;
  /** The canonical stored form of a payer or merchant address, or undefined when `raw` is not one. */
  normalizeAddress(raw: string): string | undefined;
  /** The chain's configured tokens. */
  tokens(chain: C): ChainToken[];
  /**
   * Where a DIRECT payment to the merchant wallet `wallet` in `token` arrives: EVM the wallet itself,
   * Solana the wallet's associated token account for the mint.
   */
  directPayTo(chain: C, wallet: string, token: ChainToken): Promise<string>;
  /**
   * Family-specific payment instructions for a payer's wallet, added to the 402 terms (Solana: the
   * Solana Pay `solana:` URL). Undefined when the family has none.
   */
  paymentUrl?(chain: C, order: { id: string; pay_to_address: string; token_contract: string; amount_wei: string; decimals: number; dapp_order_id: string; flow?: string }): string | undefined;
  /** What the payer of a DELEGATE order must approve (added to the 402 terms), or undefined. */
  approvalTerms?(chain: C, order: { id: string; flow: string; from_address: string; pay_to_address: string; token_contract: string; amount_wei: string; decimals: number }): Promise<Record<string, unknown> | undefined>;
  /** The family's own DELEGATE settlement loop of one chain, when set up (the EVM one is settlement/worker.ts). */
  startSettlement?(chain: C, deps: { db: Database; clock: Clock; config: Config }): Worker | undefined;
  /** Flows whose unpaid orders this family's settlement fails at expiry (the expiry sweeper leaves them alone). */
  readonly failedAtExpiry?: readonly string[];
  /**
   * Flows whose transfers name their order by a reference key, so their live orders never clash on
   * terms (migration 0018 keys them apart in `orders_live_terms_key`: every flow named here must
   * match its `SOL_` rule).
   */
  readonly outsideLiveTerms?: readonly string[];
  /**
   * A payment transaction built for the payer's wallet to sign and send (Solana Pay transaction
   * request: base64 wire transaction, unsigned, `account` as fee payer), so a page that reaches no
   * node can still pay through a wallet. Undefined when the family's wallets build transfers themselves.
   */
  paymentTransaction?(chain: C, input: { account: string; order: { id: string; pay_to_address: string; token_contract: string; amount_wei: string } }): Promise<string>;
  /** The Wallet Standard chain wallets know this chain by (`solana:mainnet`, …, `solana:localnet`). */
  walletChain?(chain: C): string;
  /** Confirmation and finality policy. */
  depth(chain: C): DepthPolicy;
  /**
   * Whether a transaction is final now, for a family whose policy is a commitment level (the node
   * knows, a block depth under the watcher's cursor does not tell): accepting a recorded late or
   * under-payment asks it (orders/finality.ts). Block-depth families need not implement it.
   */
  transactionFinal?(chain: C, txHash: string): Promise<boolean>;
  /** The watcher loop of one chain: one leader across processes (a lease), catch-up after downtime. */
  startWatcher(chain: C, deps: { db: Database; clock: Clock }, hooks: WatcherHooks): Worker;
  /** Transfer lookup by transaction (machine payments); undefined when the family has none yet. */
  txLookup?(chain: C): TxLookup;
  /** True when DELEGATE settlement is set up on this chain. */
  settles(chain: C): boolean;
}
