import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { sharedExecutor } from '../../settlement/executors.ts';
import type { SettleOptions, X402Scheme } from '../scheme.ts';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '../wire.ts';
import { ExactEvmChain } from './chain.ts';
import { PayToScope } from '../scope.ts';
import { settlePayment, type SettleContext } from './settle.ts';
import { checkPayment } from './verify.ts';

export interface ExactEvmOptions {
  /** How long settle waits for the receipt before answering `settlement_pending` (default 30 s). */
  settleWaitMs?: number;
  /** Receipt polling interval of settle (default 100 ms). */
  pollMs?: number;
}

/**
 * Scheme `exact` on EVM chains (`eip155:<chain id>`) with EIP-3009 tokens: every configured chain
 * that has at least one token marked `eip3009`. Settlement is sent by the DELEGATE executor key.
 */
export class ExactEvmScheme implements X402Scheme {
  readonly scheme = 'exact';
  readonly family = 'eip155:*';
  readonly #chains = new Map<number, ExactEvmChain>();
  readonly #ctx: SettleContext;
  private readonly config: Config;

  constructor(db: Database, config: Config, clock: Clock, opts: ExactEvmOptions = {}) {
    this.config = config;
    for (const c of config.chains) if (c.tokens.some((t) => t.eip3009)) this.#chains.set(c.chainId, new ExactEvmChain(c));
    const signer = config.settlement;
    this.#ctx = {
      db,
      scope: new PayToScope(db, config),
      chainOf: (id) => this.#chains.get(id),
      nowSeconds: () => BigInt(Math.floor(clock.now() / 1000)),
      signer,
      executorOf: (reader) => sharedExecutor(db, reader.chain, signer!),
      waitMs: opts.settleWaitMs ?? 30_000,
      pollMs: opts.pollMs ?? 100,
    };
  }

  networks(): string[] {
    return [...this.#chains.keys()].map((id) => `eip155:${id}`);
  }

  signers(): string[] {
    return this.config.settlement ? [this.config.settlement.executorAddress] : [];
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    // Simulated from the executor: the account that will send the transaction.
    const r = await checkPayment(this.#ctx, payload, requirements, { simulateFrom: this.config.settlement?.executorAddress ?? '0x0000000000000000000000000000000000000001' });
    if (r.ok) return { isValid: true, payer: r.auth.from };
    return { isValid: false, invalidReason: r.reason, invalidMessage: r.message, ...(r.payer ? { payer: r.payer } : {}) };
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements, opts: SettleOptions = {}): Promise<SettleResponse> {
    return settlePayment(this.#ctx, payload, requirements, opts);
  }

  /** The chains it serves (the reconcile worker finishes their x402 transactions). */
  chains(): ExactEvmChain[] {
    return [...this.#chains.values()];
  }
}
