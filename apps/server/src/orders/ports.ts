import type { CalldataSignRequest } from '@tollgate/contracts';
import type { ErrorCode } from '@tollgate/protocol';
import type { TokenConfig } from '../config/schema.ts';
import type { Queryable } from '../db/database.ts';
import type { FinalityRule } from './finality.ts';
import type { CreatedOrder } from './repo.ts';

/**
 * What the order service needs from the modules built on it (chain families, DELEGATE settlement),
 * as ports it owns: orders imports none of them; the composition root (main.ts) passes their
 * implementations (one PaymentPlanner per chain family: chain/evm/planner.ts, chain/solana/planner.ts;
 * chain/order-ports.ts; settlement/delegate.ts's DelegateService). A new chain family is a new
 * planner registered in main.ts, never a branch here.
 */
export interface OrderPorts {
  /**
   * The planner of the family a chain id belongs to. The composition root also answers for a chain
   * no family has (its default family's planner): that request is refused as chain_not_supported
   * after the payer and amount checks, as every refusal of a create request is ordered.
   */
  plannerFor(chainId: number): PaymentPlanner;
  /** Flows whose unpaid orders FAIL rather than EXPIRE at expiry (the families declare them). */
  flowsFailedAtExpiry(): readonly string[];
  /**
   * Flows whose live orders never clash on terms: their transfers name the order by a reference
   * key, so two live orders with the same terms are told apart (the families declare them;
   * migration 0018 gives each such order its own `orders_live_terms_key` entry).
   */
  flowsOutsideLiveTerms(): readonly string[];
  /**
   * Whether a live order was made by a session of a module built on orders (quick-pay) for the
   * order's own merchant, so a returning payer's new session order may supersede it (supersede.ts;
   * checkout sessions the core knows by the order's checkout_id). Absent: no such module.
   */
  sessionOrder?(q: Queryable, order: SessionOrderRef): Promise<boolean>;
  /** When a recorded payment on this chain is final (its family's depth policy); undefined for an unknown chain. */
  finalityRule(chainId: number): FinalityRule | undefined;
  /** The payer's calldata sign request of an order with a callback (DELEGATE mode); absent: none. */
  signRequests?: SignRequestSource | undefined;
  /**
   * The refusal of the order API's cancel for a flow whose rail alone ends its orders (the card
   * rail's FIAT_<PROCESSOR>, rails/card/port.ts), in every state; undefined: the API may cancel it.
   */
  cancelRefusal?(flow: string): { code: ErrorCode; message: string } | undefined;
}

/** What sessionOrder is asked about: the live order's merchant and reference. */
export interface SessionOrderRef {
  merchant_id: string;
  dapp_order_id: string;
}

/** Refusals a planner may answer with; the order service maps them like its own. */
type PlanRefusal = {
  kind: 'refused';
  code: 'invalid_request' | 'zero_from_address' | 'delegate_not_enabled' | 'callback_not_registered';
  message: string;
  param?: string;
};

/** What a create request asks of the chain family, once the token is resolved. */
interface PlanRequest {
  merchantId: string;
  chainId: number;
  token: TokenConfig;
  receiveType: 'DIRECT' | 'DELEGATE';
  callbackCalldata: string | undefined;
}

/** How an order is paid: its flow; where the payer pays (absent: the merchant's wallet); the callback it settles through. */
type OrderPlan = { flow: string; payToAddress?: string | undefined; callbackId?: string | undefined };

type PlanOutcome = { kind: 'plan'; plan: OrderPlan } | PlanRefusal;

/**
 * One chain family's rules of order creation (one implementation per family): the payer's address
 * rule, the stored form of a token contract, and the order's flow and pay-to address.
 */
export interface PaymentPlanner {
  /** The payer's `from_address` in stored form, or why it is refused. */
  payer(raw: string): { kind: 'payer'; address: string } | PlanRefusal;
  /** The stored form of a `token_contract` a request names (compared with the configured token's). */
  tokenContract(raw: string): string;
  /** The stored form of a transaction a request names (compared with the recorded transfers'). */
  transactionRef(raw: string): string;
  /** Flow, pay-to address and callback of the new order, or a refusal. */
  plan(req: PlanRequest): Promise<PlanOutcome>;
}

/** The order plan of a DELEGATE merchant on the EVM settlement contract: its flow, where the payer pays, the callback it settles through. */
type DelegatePlan = { flow: string; payToAddress: string; callbackId: string | undefined };
export type DelegatePlanOutcome = { kind: 'plan'; plan: DelegatePlan } | PlanRefusal;

/** DELEGATE mode on the settlement contract as the EVM planner uses it (implemented by settlement/delegate.ts). */
export interface DelegatePlanner {
  planOrder(merchantId: string, chainId: number, token: TokenConfig, callbackCalldata: string | undefined): Promise<DelegatePlanOutcome>;
}

/** The calldata sign requests of DELEGATE orders with a callback (implemented by settlement/delegate.ts). */
export interface SignRequestSource {
  signRequestFor(order: CreatedOrder & { callback_id: string; callback_calldata: string }): Promise<CalldataSignRequest | undefined>;
}
