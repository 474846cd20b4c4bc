import type { CalldataSignRequest } from '@tollgate/contracts';
import type { TokenConfig } from '../config/schema.ts';
import type { FinalityRule } from './finality.ts';
import type { CreatedOrder } from './repo.ts';

/**
 * What the order service needs from the modules built on it (chain families, DELEGATE settlement),
 * as ports it owns: orders imports none of them; the composition root (main.ts) passes their
 * implementations (chain/order-ports.ts, settlement/delegate.ts's DelegateService).
 */
export interface OrderPorts {
  /** The family of a configured chain id, undefined when no chain has it (chain/addresses.ts). */
  chainKind(chainId: number): 'evm' | 'solana' | undefined;
  /** Whether `raw` is a Solana public key (base58, 32 bytes): the payer rule of a Solana order. */
  isSolanaAddress(raw: string): boolean;
  /** Flows whose unpaid orders FAIL rather than EXPIRE at expiry (the families declare them). */
  flowsFailedAtExpiry(): readonly string[];
  /** When a recorded payment on this chain is final (its family's depth policy); undefined for an unknown chain. */
  finalityRule(chainId: number): FinalityRule | undefined;
  /** DELEGATE mode; without it DELEGATE merchants' orders are refused. */
  delegate?: DelegatePlanner | undefined;
}

/** The order plan of a DELEGATE merchant: its flow, where the payer pays, the callback it settles through. */
export type DelegatePlan = { flow: string; payToAddress: string; callbackId: string | undefined };

export type PlanOutcome =
  | { kind: 'plan'; plan: DelegatePlan }
  | { kind: 'refused'; code: 'delegate_not_enabled' | 'callback_not_registered' | 'invalid_request'; message: string; param?: string };

/** DELEGATE mode as order creation uses it (implemented by settlement/delegate.ts). */
export interface DelegatePlanner {
  planOrder(merchantId: string, chainId: number, token: TokenConfig, callbackCalldata: string | undefined): Promise<PlanOutcome>;
  /** The payer's calldata sign request of a created order with a callback, if any. */
  signRequestFor(order: CreatedOrder & { callback_id: string; callback_calldata: string }): Promise<CalldataSignRequest | undefined>;
}
