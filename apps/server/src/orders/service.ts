import { type MoneyError, newId, parseUint256, type ErrorCode } from '@tollgate/protocol';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { NonceClaim } from '../merchants/credentials.ts';
import type { MerchantService } from '../merchants/service.ts';
import * as repo from './repo.ts';
import { getOrderWithTransfers } from './transfers-repo.ts';
import { transitionOrder, type AppliedTransition } from './transition.ts';
import { OrderCreator, type CreateResult } from './create-batch.ts';
import { StatusReader, type StatusReadResult } from './status-batch.ts';
import { createSuperseding, liveTermsBlocker, type Blocker } from './supersede.ts';
import { acceptPayment, type AcceptOutcome } from './accept.ts';
import { recoverableOrder } from './recover.ts';
import type { BatchStats } from '../db/batcher.ts';
import type { CalldataSignRequest } from '@tollgate/contracts';
import type { OrderPorts } from './ports.ts';

export interface CreateOrderInput {
  merchantId: string;
  receiveType: 'DIRECT' | 'DELEGATE';
  dappOrderId: string;
  chainId: number;
  tokenSymbol: string;
  tokenContract?: string | undefined;
  fromAddress: string;
  amountWei: string;
  callbackCalldata?: string | undefined;
  /** `merchant_id` of the body, when sent: must be the key's merchant. */
  bodyMerchantId?: string | undefined;
  checkoutId?: string | undefined;
  /** Overrides the configured TTL (checkout binds: min(session expiry, TTL)). */
  expiresAt?: Date | undefined;
  /** The signed request's nonce, consumed by the creating statement (merchant API only). */
  nonce?: NonceClaim | undefined;
  /**
   * A checkout or quick-pay session's order: it supersedes the payer's own unpaid session order
   * with the same terms instead of being refused (orders/supersede.ts), and a refusal names no
   * other order (the caller answers a public route).
   */
  supersede?: boolean | undefined;
  /** `recover_existing_order`: the same order created before is answered again (orders/recover.ts). */
  recoverExisting?: boolean | undefined;
}

/** A refusal with the field it concerns; the route maps `code` through the error catalog. */
type CreateOrderRefusal = {
  kind: 'refused';
  code:
    | 'invalid_request'
    | 'invalid_amount'
    | 'merchant_mismatch'
    | 'chain_not_supported'
    | 'token_not_supported'
    | 'wallet_not_found'
    | 'order_already_exists'
    | 'order_conflict'
    | 'insufficient_fee_balance'
    | 'replay_detected'
    | 'api_key_revoked'
    | 'zero_from_address'
    | 'delegate_not_enabled'
    | 'callback_not_registered';
  message: string;
  param?: string;
};
export type CreateOrderOutcome = { kind: 'created'; order: repo.CreatedOrder; calldataSignRequest?: CalldataSignRequest | undefined } | CreateOrderRefusal;

export type CancelOutcome =
  | { kind: 'cancelled'; order: repo.OrderRow }
  | { kind: 'not_found' }
  /** the order's rail refuses (OrderPorts.cancelRefusal): its code and message */
  | { kind: 'rail_refused'; code: ErrorCode; message: string }
  | { kind: 'not_cancellable'; status: string; reason: string };

/** What the order service reports (metrics); the composition root wires it. */
export interface OrderServiceEvents {
  createRefused(code: CreateOrderRefusal['code']): void;
  transitioned(t: AppliedTransition): void;
}

/** Rounds of afterLiveTermsConflict: more than the concurrent creations of one payer's terms. */
const SUPERSEDE_ATTEMPTS = 8;

const refuse = (code: CreateOrderRefusal['code'], message: string, param?: string): CreateOrderRefusal => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

/**
 * Orders: creation (validation, fee reserve, insert — one transaction), reads, cancel and expiry.
 * Payment observation lives in chain/evm; every status change goes through `transitionOrder`.
 */
export class OrderService {
  /** Group-commits creation (create-batch.ts); one per process, shared by the API and checkout binds. */
  private readonly creator: OrderCreator;
  /** Group-commits the signed status reads with their nonces (status-batch.ts). */
  private readonly statusReader: StatusReader;
  private readonly db: Database;
  private readonly config: Config;
  private readonly merchants: MerchantService;
  private readonly clock: Clock;
  private readonly events: OrderServiceEvents | undefined;
  private readonly ports: OrderPorts;

  constructor(
    db: Database,
    config: Config,
    merchants: MerchantService,
    clock: Clock,
    events: OrderServiceEvents | undefined,
    /** The chain families' planners and DELEGATE's sign requests (ports.ts), implemented above orders. */
    ports: OrderPorts,
  ) {
    this.db = db;
    this.config = config;
    this.merchants = merchants;
    this.clock = clock;
    this.events = events;
    this.ports = ports;
    this.creator = new OrderCreator(db);
    this.statusReader = new StatusReader(db);
  }

  /** Group-commit counters of order creation (metrics). */
  batchStats(): BatchStats {
    return this.creator.stats();
  }

  /** Group-commit counters of the signed status reads (metrics). */
  statusBatchStats(): BatchStats {
    return this.statusReader.stats();
  }

  async createOrder(input: CreateOrderInput): Promise<CreateOrderOutcome> {
    const out = await this.decideCreate(input);
    if (out.kind === 'refused') this.events?.createRefused(out.code);
    else this.events?.transitioned({ from: null, to: 'CHECKOUT_VERIFIED', trigger: 'create' });
    return out;
  }

  private async decideCreate(input: CreateOrderInput): Promise<CreateOrderOutcome> {
    if (input.bodyMerchantId !== undefined && input.bodyMerchantId !== input.merchantId) {
      return refuse('merchant_mismatch', 'merchant_id does not match the API key', 'merchant_id');
    }
    if (input.receiveType === 'DIRECT' && input.callbackCalldata !== undefined) {
      return refuse('invalid_request', 'callback_calldata is only accepted for DELEGATE merchants', 'callback_calldata');
    }
    // The chain family's rules (ports.ts: one planner per family, registered by main.ts).
    const planner = this.ports.plannerFor(input.chainId);
    const payer = planner.payer(input.fromAddress);
    if (payer.kind === 'refused') return payer;
    let amount: bigint;
    try {
      amount = parseUint256(input.amountWei);
    } catch (err) {
      return refuse('invalid_amount', `amount_wei ${(err as MoneyError).message}`, 'amount_wei');
    }
    if (amount <= 0n) return refuse('invalid_amount', 'amount_wei must be positive', 'amount_wei');

    const token = this.merchants.resolveToken(input.chainId, input.tokenSymbol);
    if (token === 'chain_not_supported') return refuse(token, `chain ${input.chainId} is not configured`, 'chain_id');
    if (token === 'token_not_supported') return refuse(token, `token ${input.tokenSymbol} is not configured on chain ${input.chainId}`, 'token_symbol');
    if (input.tokenContract !== undefined && planner.tokenContract(input.tokenContract) !== token.address) {
      return refuse('invalid_request', `token_contract does not match the configured ${input.tokenSymbol} contract ${token.address}`, 'token_contract');
    }
    const planned = await planner.plan({ merchantId: input.merchantId, chainId: input.chainId, token, receiveType: input.receiveType, callbackCalldata: input.callbackCalldata });
    if (planned.kind === 'refused') return planned;
    const plan = planned.plan;
    const now = this.clock.now();
    const expiresAt = input.expiresAt ?? new Date(now + this.config.orderTtlSeconds * 1000);
    const item: repo.OrderToCreate = {
      merchantId: input.merchantId,
      id: newId('ord'),
      dappOrderId: input.dappOrderId,
      flow: plan.flow,
      payToAddress: plan.payToAddress,
      callbackId: plan.callbackId,
      chainId: input.chainId,
      payToChainId: input.chainId,
      tokenSymbol: input.tokenSymbol,
      tokenContract: token.address,
      decimals: token.decimals,
      fromAddress: payer.address,
      amountWei: amount,
      feeAmount: this.config.fees.perOrderMicros,
      expiresAt,
      callbackCalldata: input.callbackCalldata,
      checkoutId: input.checkoutId,
      nonce: input.nonce && { apiKey: input.nonce.apiKey, nonce: input.nonce.nonce },
    };
    let out: CreateResult | { kind: 'blocked'; blocker: Blocker | undefined } = await this.creator.create(item);
    if (out.kind === 'live_terms_conflict') out = await this.afterLiveTermsConflict(item, input.supersede === true);
    if (input.nonce && !(out.kind === 'insufficient_fee' && !out.nonceSettled)) input.nonce.settled = true;
    switch (out.kind) {
      case 'created': {
        const signRequest =
          plan.callbackId && input.callbackCalldata !== undefined && this.ports.signRequests ? await this.ports.signRequests.signRequestFor({ ...out.order, callback_id: plan.callbackId, callback_calldata: input.callbackCalldata }) : undefined;
        return { kind: 'created', order: out.order, ...(signRequest ? { calldataSignRequest: signRequest } : {}) };
      }
      case 'replay':
        return refuse('replay_detected', 'Replay request detected');
      case 'key_revoked':
        return refuse('api_key_revoked', 'API key has been revoked');
      case 'missing_wallet':
        return refuse('wallet_not_found', `merchant accepts no ${input.tokenSymbol} on chain ${input.chainId}`, 'token_symbol');
      case 'insufficient_fee':
        return refuse('insufficient_fee_balance', 'fee balance is too low to reserve the order fee; top up or cancel stale orders');
      case 'duplicate_dapp_order_id': {
        const existing = input.recoverExisting ? await recoverableOrder(this.db, item) : undefined;
        if (existing) return { kind: 'created', order: existing, ...(await this.signRequestOf(existing)) };
        return refuse('order_already_exists', `an order with dapp_order_id ${input.dappOrderId} already exists`, 'dapp_order_id');
      }
      case 'live_terms_conflict':
      case 'blocked':
        return refuse('order_conflict', conflictMessage(input, 'blocker' in out ? out.blocker : undefined), 'amount_wei');
    }
  }

  /**
   * A live order has the new order's terms. A session's order supersedes it when it may
   * (orders/supersede.ts), retried while concurrent creations move the live order on — each lost
   * attempt is another creation's success, so the attempts bound how many creations of the same
   * payer's terms may race (tabs of one payer: a handful); otherwise the blocking order is looked
   * up so the refusal can name it.
   */
  private async afterLiveTermsConflict(item: repo.OrderToCreate, supersede: boolean): Promise<CreateResult | { kind: 'blocked'; blocker: Blocker | undefined }> {
    if (!supersede) return { kind: 'blocked', blocker: await liveTermsBlocker(this.db, item, false, this.ports) };
    for (let attempt = 0; attempt < SUPERSEDE_ATTEMPTS; attempt++) {
      const r = await createSuperseding(this.db, item, new Date(this.clock.now()), this.ports);
      // (The superseded order's move is counted by transitionOrder's observers.)
      if (r.kind === 'created') return { kind: 'created', order: r.order };
      if (r.kind === 'blocked') return r;
      if (r.kind === 'refused') {
        if (r.missing === 'fee_short' || r.missing === 'fee_account') return { kind: 'insufficient_fee', nonceSettled: true };
        if (r.missing === 'wallet') return { kind: 'missing_wallet' };
        if (r.missing !== 'conflict') return { kind: 'replay' };
        if ((await repo.existingDappOrderIds(this.db, [item])).size > 0) return { kind: 'duplicate_dapp_order_id' };
      }
      // Nothing blocks any more, or another order took the terms meanwhile: the plain creation
      // again (group-committed); a clash there comes back here.
      const again = await this.creator.create(item);
      if (again.kind !== 'live_terms_conflict') return again;
    }
    return { kind: 'blocked', blocker: undefined };
  }

  /** The calldata_sign_request of a stored DELEGATE order with calldata (none otherwise). */
  private async signRequestOf(o: repo.OrderRow): Promise<{ calldataSignRequest?: CalldataSignRequest }> {
    if (!o.callback_id || o.callback_calldata === null || !this.ports.signRequests) return {};
    const req = await this.ports.signRequests.signRequestFor({ ...o, callback_id: o.callback_id, callback_calldata: o.callback_calldata });
    return req ? { calldataSignRequest: req } : {};
  }

  getOrder(merchantId: string, orderId: string) {
    return repo.getOrderForMerchant(this.db, merchantId, orderId);
  }

  /** The order with the transfers recorded against it (status record). */
  getOrderWithTransfers(merchantId: string, orderId: string) {
    return getOrderWithTransfers(this.db, merchantId, orderId);
  }

  /**
   * The status read of a signed request: consumes `nonce` (its claim is settled once this
   * resolves) and reads the order in the same statement, batched with concurrent reads.
   */
  readStatus(merchantId: string, orderId: string, nonce: NonceClaim): Promise<StatusReadResult> {
    return this.statusReader.read({ merchantId, orderId, nonce });
  }

  /**
   * Cancels a CHECKOUT_VERIFIED order and releases its fee. Refused once a payment has been seen
   * on chain (even unconfirmed): cancelling then would strand the payer's funds on a dead order.
   */
  async cancelOrder(merchantId: string, orderId: string): Promise<CancelOutcome> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<repo.OrderRow>('SELECT * FROM orders WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [orderId, merchantId]);
      const o = rows[0];
      if (!o) return { kind: 'not_found' } as const;
      // A flow whose rail alone ends its orders (card) is refused in every state (ports.ts).
      const refusal = this.ports.cancelRefusal?.(o.flow);
      if (refusal) return { kind: 'rail_refused', ...refusal } as const;
      if (o.status !== 'CHECKOUT_VERIFIED') return { kind: 'not_cancellable', status: o.status, reason: `order is ${o.status}; only CHECKOUT_VERIFIED orders can be cancelled` } as const;
      if (o.transfer_id !== null) return { kind: 'not_cancellable', status: o.status, reason: 'a payment for this order was already observed on chain and is confirming' } as const;
      // The gateway's own pull is recorded and may land (DELEGATE approve-and-pull): not cancellable.
      if (o.settlement_tx_hash) return { kind: 'not_cancellable', status: o.status, reason: 'the settlement of this order was sent and is confirming' } as const;
      const done = await transitionOrder(tx, { orderId, from: 'CHECKOUT_VERIFIED', trigger: 'cancel', now: new Date(this.clock.now()) });
      if (!done) return { kind: 'not_cancellable', status: o.status, reason: 'order changed state concurrently' } as const;
      return { kind: 'cancelled', order: done } as const;
    });
  }

  /** Accepts a recorded late or under-payment (orders/accept.ts). */
  acceptPayment(merchantId: string, orderId: string, sel: { txHash?: string | undefined; logIndex?: number | undefined } = {}): Promise<AcceptOutcome> {
    return acceptPayment(this.db, {
      merchantId,
      orderId,
      ...sel,
      // the family of the order's chain decides (ports.ts), for the reference and for finality
      txRef: (id, raw) => this.ports.plannerFor(id).transactionRef(raw),
      finality: (id) => this.ports.finalityRule(id),
      now: new Date(this.clock.now()),
    });
  }

  /** Expires live orders past `expires_at` with no payment seen; returns how many. */
  async expireDue(limit = 500): Promise<number> {
    const due = await repo.listExpirable(this.db, new Date(this.clock.now()), limit, this.ports.flowsFailedAtExpiry());
    let n = 0;
    for (const { id } of due) {
      const done = await this.db.transaction(async (tx) => {
        // Re-check inside the transaction: a payment may have been matched since the listing.
        const { rows } = await tx.query<{ transfer_id: number | null; settlement_tx_hash: string | null }>(`SELECT transfer_id, settlement_tx_hash FROM orders WHERE id = $1 AND status = 'CHECKOUT_VERIFIED' FOR UPDATE`, [id]);
        if (!rows[0] || rows[0].transfer_id !== null || rows[0].settlement_tx_hash !== null) return undefined;
        return transitionOrder(tx, { orderId: id, from: 'CHECKOUT_VERIFIED', trigger: 'expire', now: new Date(this.clock.now()) });
      });
      if (done) n++;
    }
    return n;
  }
}

/**
 * The order_conflict message. The merchant API names the blocking order and how to release it;
 * a session's refusal (a public route) names no order, and another merchant's order (a pay-to
 * wallet two merchants share) is never named.
 */
function conflictMessage(input: CreateOrderInput, b: Blocker | undefined): string {
  const base = 'a live order with the same payer, pay-to address, token and amount exists; no transfer could tell the two apart';
  if (input.supersede) return `${base}: it must be paid, cancelled by the merchant or expire first`;
  if (!b || b.merchant_id !== input.merchantId) return `${base}; wait for it to expire or be paid`;
  return `${base}: order ${b.id} (expires ${b.expires_at.toISOString()}); cancel it (POST /api/v1/orders/${b.id}/cancel) or wait for its expiry, then create this one again`;
}
