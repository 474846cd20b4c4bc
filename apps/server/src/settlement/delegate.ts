import { randomBytes } from 'node:crypto';
import { newId } from '@tollgate/protocol';
import type { CalldataSignRequest } from '@tollgate/contracts';
import { size, type Hex } from 'viem';
import type { ChainConfig, Config, TokenConfig } from '../config/schema.ts';
import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { getMerchant } from '../merchants/repo.ts';
import * as orders from '../orders/repo.ts';
import type { DelegatePlanOutcome, DelegatePlanner, SignRequestSource } from '../orders/ports.ts';
import { delegateFlowFor, delegateFlowNamed } from './flows/index.ts';
import * as repo from './repo.ts';
import { recordDelegateRefund } from '../refunds/repo.ts';
import { isPayerSignature, signRequestOf } from './sign-request.ts';
import type { SettlementExecutor } from './executor.ts';
import { sharedExecutor } from './executors.ts';
import { checkAdapter, type AdapterProblem } from './adapter-check.ts';
import { relayAuthorization, type AuthorizationOutcome, type Eip3009Authorization } from './authorization.ts';

/** `callback_calldata` is at most 8 KiB (docs/delegate.md). */
const MAX_CALLBACK_CALLDATA_BYTES = 8192;

/** A callback registration as the admin API shows it (docs/delegate.md). */
function callbackView(c: repo.CallbackRow, chain: ChainConfig | undefined) {
  const contract = chain?.settlementContract ?? null;
  return {
    callback_id: c.id,
    merchant_id: c.merchant_id,
    chain_id: c.chain_id,
    callback_contract: c.callback_contract,
    eip712_name: c.eip712_name,
    eip712_version: c.eip712_version,
    spent_address: contract,
    core_address: contract,
    created_at: c.created_at.toISOString(),
  };
}
export type CallbackView = ReturnType<typeof callbackView>;

export type RegisterOutcome =
  | { kind: 'registered'; callback: CallbackView }
  | { kind: 'merchant_not_found' }
  | { kind: 'not_delegate' }
  | { kind: 'chain_not_supported' }
  | { kind: 'delegate_not_enabled' }
  /** the chain says the adapter cannot be called as registered (settlement/adapter-check.ts) */
  | { kind: 'adapter_invalid'; problem: AdapterProblem };

export type RefundOutcome = { kind: 'refund'; orderId: string; refundTxHash: string; refundId?: string } | { kind: 'order_not_found' } | { kind: 'not_refundable'; reason: string; already?: true };

export type SignatureOutcome = { kind: 'accepted'; orderId: string } | { kind: 'order_not_found' } | { kind: 'no_sign_request' } | { kind: 'expired' } | { kind: 'invalid_signature' } | { kind: 'signature_exists' };

/**
 * DELEGATE mode's merchant-facing decisions: callback registrations, the flow and pay-to address
 * of a new order, and the payer's calldata signature. Settlement itself is the worker's
 * (settlement/worker.ts); every order status change goes through orders/transition.ts.
 */
export class DelegateService implements DelegatePlanner, SignRequestSource {
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  constructor(db: Database, config: Config, clock: Clock) {
    this.db = db;
    this.config = config;
    this.clock = clock;
  }

  /**
   * The one executor of a chain in this process (the worker's and the refund route's: one nonce
   * lock). Its rows count as `confirmed` at the chain's finality depth, so a confirmed settlement
   * is a final one.
   */
  executorFor(chainId: number): SettlementExecutor | undefined {
    const chain = this.chain(chainId);
    if (!chain?.settlementContract || !this.config.settlement) return undefined;
    // The process-wide executor of this key and chain (x402 settle sends with it too).
    return sharedExecutor(this.db, chain, this.config.settlement);
  }

  /**
   * Refund of a FAILED DELEGATE order whose payment reached the settlement contract, asked by the
   * operator or (through the merchant API, `merchantId` set) by the order's merchant, under the
   * same checks: records the refund transaction (signed, before it is sent) with its row of the
   * refunds model (refunds/repo.ts) and broadcasts it; the settlement worker finishes it after a
   * crash and announces it (`order.refunded`) once mined. The operator's call is idempotent (a
   * second call returns the same transaction); a merchant's second request is refused.
   */
  async refund(orderId: string, by: { merchantId?: string | undefined; reason?: string | undefined } = {}): Promise<RefundOutcome> {
    const o = await repo.getDelegateOrder(this.db, orderId);
    if (!o || (by.merchantId !== undefined && o.merchant_id !== by.merchantId)) return { kind: 'order_not_found' };
    if (!delegateFlowNamed(o.flow)) return { kind: 'not_refundable', reason: 'only DELEGATE orders are refunded by the gateway' };
    if (o.status !== 'FAILED') return { kind: 'not_refundable', reason: `order is ${o.status}; only FAILED orders are refundable` };
    if (o.transfer_id === null) return { kind: 'not_refundable', reason: 'no payment of this order reached the settlement contract' };
    const ex = this.executorFor(o.chain_id);
    if (!ex) return { kind: 'not_refundable', reason: `DELEGATE settlement is not set up on chain ${o.chain_id}` };
    const requestedBy = by.merchantId !== undefined ? 'merchant' : 'operator';
    const record = (q: Queryable, txHash: string) => Promise.all([repo.markRefundSent(q, o.id, txHash), recordDelegateRefund(q, { id: newId('rf'), orderId: o.id, txHash, requestedBy, reason: by.reason })]);
    const p = await ex.prepareRefund({ orderId: o.id, payer: o.from_address, token: o.token_contract, amount: BigInt(o.amount_wei) }, { also: (q, rec) => record(q, rec.txHash).then(() => undefined) });
    if (p.kind === 'refused') return { kind: 'not_refundable', reason: `the settlement contract refuses the refund (${p.error})` };
    if (p.kind === 'existing' && requestedBy === 'merchant') return { kind: 'not_refundable', reason: 'this order is already refunded', already: true };
    const [, refund] = p.kind === 'existing' ? await this.db.transaction((tx) => record(tx, p.record.txHash)) : [undefined, undefined];
    // Best effort now; the worker re-broadcasts a pending row on its next tick.
    if (p.record.status === 'pending') await ex.broadcast(p.record).catch(() => undefined);
    return { kind: 'refund', orderId: o.id, refundTxHash: p.record.txHash, ...(refund ? { refundId: refund.id } : {}) };
  }

  /** `POST /api/v1/orders/{id}/authorization` (docs/delegate.md): relays the payer's EIP-3009 authorization (settlement/authorization.ts). */
  submitAuthorization(merchantId: string, orderId: string, auth: Eip3009Authorization): Promise<AuthorizationOutcome> {
    return relayAuthorization({ db: this.db, clock: this.clock, executorFor: (id) => this.executorFor(id) }, merchantId, orderId, auth);
  }

  chain(chainId: number): ChainConfig | undefined {
    return this.config.chains.find((c) => c.chainId === chainId);
  }

  /** The chain's settlement contract when DELEGATE is set up on it (contract and executor key). */
  settlementOf(chainId: number): Hex | undefined {
    const c = this.chain(chainId);
    return c?.settlementContract && this.config.settlement ? c.settlementContract : undefined;
  }

  async registerCallback(merchantId: string, r: { chainId: number; callbackContract: string; eip712Name: string; eip712Version: string }): Promise<RegisterOutcome> {
    const chain = this.chain(r.chainId);
    const m = await getMerchant(this.db, merchantId);
    if (!m) return { kind: 'merchant_not_found' };
    if (m.receive_type !== 'DELEGATE') return { kind: 'not_delegate' };
    if (!chain) return { kind: 'chain_not_supported' };
    const ex = this.executorFor(r.chainId);
    if (!ex) return { kind: 'delegate_not_enabled' };
    // The chain is read before anything is written: an adapter the settlement contract cannot call
    // as registered is refused now, not when a paid order fails at settlement.
    const problem = await checkAdapter(ex.client, { chainId: r.chainId, address: r.callbackContract as Hex, eip712Name: r.eip712Name, eip712Version: r.eip712Version });
    if (problem) return { kind: 'adapter_invalid', problem };
    // One transaction: the previous registration is closed and the new one opened together.
    const row = await this.db.transaction((tx) => repo.insertCallback(tx, { id: `cb_${randomBytes(12).toString('hex')}`, merchantId, ...r }));
    return { kind: 'registered', callback: callbackView(row, chain) };
  }

  async listCallbacks(merchantId: string): Promise<CallbackView[] | undefined> {
    if (!(await getMerchant(this.db, merchantId))) return undefined;
    return (await repo.listCallbacks(this.db, merchantId)).map((c) => callbackView(c, this.chain(c.chain_id)));
  }

  /**
   * Flow, pay-to address and callback of a new DELEGATE order on an EVM chain (docs/delegate.md;
   * the EVM payment planner, chain/evm/planner.ts, asks): ERC20_3009 when the token supports
   * EIP-3009, else ERC20_APPROVE_XFER; the payer pays the chain's settlement contract;
   * `callback_calldata` needs a registration on the chain. A merchant with a registration but no
   * calldata is still settled through its callback (with empty `calldata_`).
   */
  async planOrder(merchantId: string, chainId: number, token: TokenConfig, callbackCalldata: string | undefined): Promise<DelegatePlanOutcome> {
    const settlement = this.settlementOf(chainId);
    if (!settlement) return { kind: 'refused', code: 'delegate_not_enabled', message: `DELEGATE settlement is not set up on chain ${chainId}`, param: 'chain_id' };
    if (callbackCalldata !== undefined && size(callbackCalldata as Hex) > MAX_CALLBACK_CALLDATA_BYTES) {
      return { kind: 'refused', code: 'invalid_request', message: `callback_calldata is at most ${MAX_CALLBACK_CALLDATA_BYTES} bytes`, param: 'callback_calldata' };
    }
    const cb = await repo.activeCallback(this.db, merchantId, chainId);
    if (callbackCalldata !== undefined && !cb) {
      return { kind: 'refused', code: 'callback_not_registered', message: `no callback contract is registered for chain ${chainId}`, param: 'callback_calldata' };
    }
    return { kind: 'plan', plan: { flow: delegateFlowFor(token).name, payToAddress: settlement, callbackId: cb?.id } };
  }

  /** The signing request of a created order (for its 402 terms), or undefined. */
  async signRequestFor(order: orders.OrderRow | (Parameters<typeof signRequestOf>[0] & { callback_id: string | null })): Promise<CalldataSignRequest | undefined> {
    if (!order.callback_id || order.callback_calldata === null) return undefined;
    const cb = await repo.getCallback(this.db, order.callback_id);
    const settlement = this.chain(order.chain_id)?.settlementContract;
    if (!cb || !settlement) return undefined;
    return signRequestOf(order, cb, settlement);
  }

  /**
   * `POST /api/v1/orders/{id}/calldata-signature` (docs/delegate.md): verifies the payer's EIP-712 signature
   * (recovering `from_address`), the deadline, and stores it once. The same signature again is
   * accepted (an idempotent retry); a different one is refused: the first stands.
   */
  async submitSignature(merchantId: string, orderId: string, signature: Hex): Promise<SignatureOutcome> {
    const order = await orders.getOrderForMerchant(this.db, merchantId, orderId);
    if (!order) return { kind: 'order_not_found' };
    if (!delegateFlowNamed(order.flow)) return { kind: 'no_sign_request' };
    const req = await this.signRequestFor(order);
    if (!req) return { kind: 'no_sign_request' };
    if (BigInt(Math.floor(this.clock.now() / 1000)) > BigInt(req.message.deadline)) return { kind: 'expired' };
    if (!(await isPayerSignature(req, order.from_address, signature))) return { kind: 'invalid_signature' };
    const stored = await repo.storeCalldataSignature(this.db, orderId, signature.toLowerCase());
    if (stored !== signature.toLowerCase()) return { kind: 'signature_exists' };
    return { kind: 'accepted', orderId };
  }
}
