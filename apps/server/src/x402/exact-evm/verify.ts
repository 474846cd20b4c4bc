import { verifyTypedData, type Hex } from 'viem';
import type { ChainConfig, TokenConfig } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import { findClaim } from '../repo.ts';
import type { PayToScope } from '../scope.ts';
import { Reason, type PaymentPayload, type PaymentRequirements, type ReasonCode } from '../wire.ts';
import { transferWithAuthorizationTypes } from './abi.ts';
import { checkTerms, parseAuthorization, parseRequirements, type Authorization, type Requirement } from './authorization.ts';
import type { ExactEvmChain } from './chain.ts';

/** A payment that passed every check, with what settle needs. */
export interface Checked {
  ok: true;
  auth: Authorization;
  req: Requirement;
  chain: ChainConfig;
  token: TokenConfig;
  reader: ExactEvmChain;
}
export interface Refused {
  ok: false;
  reason: ReasonCode;
  message: string;
  payer?: Hex;
}

export interface CheckContext {
  db: Database;
  /** Whom the facilitator settles for (x402/scope.ts). */
  scope: PayToScope;
  /** Chain reads by chain id; undefined for chains this gateway does not serve. */
  chainOf(chainId: number): ExactEvmChain | undefined;
  nowSeconds(): bigint;
}

export interface CheckOptions {
  /** Also eth_call the transfer from `simulateFrom` (verify: yes; settle: the executor's gas estimate simulates it). */
  simulateFrom?: Hex;
  /** Skip the on-chain reads (balance, nonce state): settle's executor estimate refuses what they would. */
  offChainOnly?: boolean;
  /**
   * Leave the EIP-712 signature to the caller's simulation (settle): the token's
   * `transferWithAuthorization` checks it in the executor's gas estimate, before anything is
   * recorded or sent, and a revert there is diagnosed as `invalid_exact_evm_signature`. Recovering
   * the signer in JavaScript (noble secp256k1) was the largest CPU cost of a settle: ~22 % of the
   * gateway's CPU under concurrent settles (bench/x402-settle.ts with BENCH_CPU_PROF), ~4 ms each.
   */
  signatureBySimulation?: boolean;
  /** The caller checked the pay-to scope itself (settle: before its claim lookup), or it does not apply. */
  scopeChecked?: boolean;
}

const refuse = (reason: ReasonCode, message: string, payer?: Hex): Refused => ({ ok: false, reason, message, ...(payer ? { payer } : {}) });

/** Parses and matches the payload against the requirements and the configured chains (no I/O). */
export function parsePayment(ctx: CheckContext, payload: PaymentPayload, requirements: PaymentRequirements): Omit<Checked, 'ok'> | Refused {
  if (payload.accepted.scheme !== 'exact' || requirements.scheme !== 'exact') return refuse(Reason.schemeMismatch, 'scheme must be exact');
  if (payload.accepted.network !== requirements.network) return refuse(Reason.networkMismatch, 'the payload was made for another network');
  const req = parseRequirements(requirements);
  if (!req.ok) return refuse(req.reason, req.message);
  const auth = parseAuthorization(payload);
  if (!auth.ok) return refuse(auth.reason, auth.message);
  const payer = auth.value.from;
  // Before anything else costs: 0 moves nothing (the exact-amount check would pass 0 = 0).
  if (req.value.amount === 0n || auth.value.value === 0n) return refuse(Reason.zeroValue, 'a 0-value authorization moves nothing; this facilitator does not settle it', payer);
  const reader = ctx.chainOf(req.value.chainId);
  if (!reader) return refuse(Reason.invalidNetwork, `network ${requirements.network} is not served by this facilitator`, payer);
  const token = reader.chain.tokens.find((t) => t.address === req.value.asset && t.eip3009);
  if (!token) return refuse(Reason.eip3009NotSupported, 'the asset is not an EIP-3009 token configured on this gateway', payer);
  return { auth: auth.value, req: req.value, chain: reader.chain, token, reader };
}

/**
 * The x402 `exact` checks of an EIP-3009 payment, in the reference facilitator's order:
 * scheme and network, EIP-712 signature against the token's domain (name and version from the
 * requirements' `extra`, else read from the token), recipient, validity window (≥ 6 s left),
 * exact amount; then the authorization nonce (claimed in our database, used on chain), the
 * payer's balance and a simulation of the transfer.
 */
export async function checkPayment(ctx: CheckContext, payload: PaymentPayload, requirements: PaymentRequirements, opts: CheckOptions = {}): Promise<Checked | Refused> {
  const p = parsePayment(ctx, payload, requirements);
  if ('ok' in p) return p;
  const { auth, req, reader } = p;
  const payer = auth.from;
  if (!opts.scopeChecked) {
    const refused = await checkScope(ctx, req, payer);
    if (refused) return refused;
  }
  if (!opts.signatureBySimulation) {
    const refused = await checkSignature(p);
    if (refused) return refused;
  }
  const terms = checkTerms(auth, req, ctx.nowSeconds());
  if (!terms.ok) return refuse(terms.reason, terms.message, payer);
  if (opts.offChainOnly) return { ok: true, ...p };
  // Our claim first (one indexed read): an authorization submitted here is refused without RPC.
  if (await findClaim(ctx.db, { chain_id: req.chainId, token: req.asset, payer: auth.from, nonce: auth.nonce })) {
    return refuse(Reason.nonceUsed, 'the authorization was already submitted for settlement', payer);
  }
  const state = await reader.state(req.asset, auth, opts.simulateFrom);
  if (state.used) return refuse(Reason.nonceUsed, 'the authorization nonce is used on chain', payer);
  if (state.balance < auth.value) return refuse(Reason.insufficientBalance, 'the payer’s balance is below the authorized value', payer);
  if (state.simulation && !state.simulation.ok) return refuse(Reason.simulationFailed, state.simulation.message, payer);
  return { ok: true, ...p };
}

/** The pay-to scope (x402/scope.ts): one indexed read, before the signature's CPU and any RPC. */
export async function checkScope(ctx: CheckContext, req: Requirement, payer: Hex): Promise<Refused | undefined> {
  if (await ctx.scope.serves(req.chainId, req.payTo)) return undefined;
  return refuse(Reason.payToNotServed, 'payTo is not a receiving wallet of a merchant of this gateway (nor its settlement contract, nor on the operator’s x402.facilitate_for list)', payer);
}

/** The payer's EIP-712 signature over the authorization, against the token's domain. */
export async function checkSignature({ auth, req, reader }: Omit<Checked, 'ok'>): Promise<Refused | undefined> {
  const payer = auth.from;
  const domain = req.name !== undefined && req.version !== undefined ? { name: req.name, version: req.version } : await reader.domainOf(req.asset);
  if (!domain) return refuse(Reason.eip3009NotSupported, 'the token has no EIP-712 name/version and the requirements give none', payer);
  const signed = await verifyTypedData({
    address: auth.from,
    domain: { ...domain, chainId: req.chainId, verifyingContract: req.asset },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: { from: auth.from, to: auth.to, value: auth.value, validAfter: auth.validAfter, validBefore: auth.validBefore, nonce: auth.nonce },
    signature: auth.signature,
  }).catch(() => false);
  if (!signed) return refuse(Reason.invalidSignature, 'the signature is not the payer’s over this authorization and token domain', payer);
  return undefined;
}
