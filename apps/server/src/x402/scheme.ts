import { BaseError } from 'viem';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from './wire.ts';

/**
 * The port of an x402 payment scheme on one family of networks (one folder per implementation:
 * `exact-evm/`). The facilitator picks the implementation by `scheme` and `network`; a new scheme
 * or chain family is a new implementation, never a branch in the facilitator.
 */
export interface X402Scheme {
  readonly scheme: string;
  /** CAIP family of its networks (`eip155:*`): the key of `signers` in /supported. */
  readonly family: string;
  /** The networks it serves (CAIP-2), in /supported order. */
  networks(): string[];
  /** Addresses that submit its settlements (empty when settlement is off). */
  signers(): string[];
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements, opts?: SettleOptions): Promise<SettleResponse>;
}

export interface SettleOptions {
  /**
   * The machine-payment challenge this settlement pays (the `Payment` scheme's `authorization`
   * credential), recorded with the claim: such a settlement is shown to the merchant as that
   * machine payment, not a second time as an x402 settlement.
   */
  challengeId?: string;
}

/** The chain could not be read or written (RPC fault): the routes answer 503, nothing was decided. */
export class ChainUnavailable extends Error {
  override readonly cause: unknown;
  constructor(cause: unknown) {
    super('the chain could not be read; retry later');
    this.cause = cause;
    this.name = 'ChainUnavailable';
  }
}

/** Runs a chain call, turning an RPC fault (any viem error) into ChainUnavailable. */
export async function onChain<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof BaseError) throw new ChainUnavailable(err);
    throw err;
  }
}
