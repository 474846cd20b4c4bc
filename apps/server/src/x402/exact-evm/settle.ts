import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import type { SettlementSigner } from '../../config/schema.ts';
import { isPgError, UNIQUE_VIOLATION } from '../../db/database.ts';
import type { SettlementExecutor } from '../../settlement/executor.ts';
import { findSettlement, type SettlementRecord } from '../../settlement/repo.ts';
import { findClaim, insertClaim, releaseClaim, type ClaimRow } from '../repo.ts';
import { onChain } from '../scheme.ts';
import { Reason, type PaymentPayload, type PaymentRequirements, type ReasonCode, type SettleResponse } from '../wire.ts';
import { eip3009Abi } from './abi.ts';
import { transferArgs, transferCalldata, type ExactEvmChain } from './chain.ts';
import { checkPayment, parsePayment, type CheckContext, type Checked } from './verify.ts';

export interface SettleContext extends CheckContext {
  signer: SettlementSigner | undefined;
  executorOf(reader: ExactEvmChain): SettlementExecutor;
  /** How long settle waits for the receipt before answering pending (ms). */
  waitMs: number;
  pollMs: number;
}

/** Simulation reverts (custom error names of USDC-like tokens, FiatTokenV2 strings) → x402 reasons. */
function reasonOfRevert(error: string): ReasonCode {
  if (/AuthorizationAlreadyUsed|authorization is used|used or canceled/i.test(error)) return Reason.nonceUsed;
  if (/InsufficientBalance|exceeds balance/i.test(error)) return Reason.insufficientBalance;
  if (/InvalidSignature|invalid signature/i.test(error)) return Reason.invalidSignature;
  if (/AuthorizationExpired|authorization is expired/i.test(error)) return Reason.validBefore;
  if (/AuthorizationNotYetValid|authorization is not yet valid/i.test(error)) return Reason.validAfter;
  return Reason.simulationFailed;
}

/**
 * Settles one x402 `exact` EIP-3009 payment, at most once per authorization:
 *   1. a claim exists for (chain, token, payer, nonce): the same payload follows its transaction
 *      (a repeat, or a concurrent settle that lost the race); another signature is refused;
 *   2. otherwise the off-chain checks run, the claim is inserted (UNIQUE: one winner), and the
 *      executor simulates, signs and RECORDS `transferWithAuthorization` before broadcasting it
 *      (its crash safety: a killed process re-broadcasts the same bytes on reconcile);
 *   3. the answer waits for the receipt; none within `waitMs` → `settlement_pending` with the
 *      transaction hash (the reference facilitator's answer for an unknown outcome), and a
 *      repeated settle of the same payload later answers with that same transaction.
 */
export async function settlePayment(ctx: SettleContext, payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
  const network = requirements.network;
  const answer = (r: { reason: ReasonCode; message: string; payer?: Hex }, tx = ''): SettleResponse => ({
    success: false,
    errorReason: r.reason,
    errorMessage: r.message,
    transaction: tx,
    network,
    ...(r.payer ? { payer: r.payer } : {}),
  });
  const parsed = parsePayment(ctx, payload, requirements);
  if ('ok' in parsed) return answer(parsed);
  const payer = parsed.auth.from;
  if (!ctx.signer) return answer({ reason: Reason.settlementDisabled, message: 'this gateway has no executor key (SETTLEMENT_KEY): it verifies but does not settle', payer });
  const key = { chain_id: parsed.req.chainId, token: parsed.req.asset, payer, nonce: parsed.auth.nonce };

  for (let attempt = 0; attempt < 3; attempt++) {
    const checked = await checkPayment(ctx, payload, requirements, { offChainOnly: true });
    if (checked.ok) {
      const claim = await insertClaim(ctx.db, {
        id: `x4a_${randomBytes(12).toString('hex')}`,
        ...key,
        recipient: checked.auth.to,
        amount: checked.auth.value.toString(),
        valid_before: checked.auth.validBefore.toString(),
        signature: checked.auth.signature,
      });
      if (claim) return submit(ctx, checked, claim, network);
    }
    // Refused, or claimed already: a claim of this very payload is followed (a repeat — also
    // after the authorization expired — or a concurrent settle that won the race).
    const existing = await findClaim(ctx.db, key);
    if (existing) {
      if (existing.signature !== parsed.auth.signature) return answer({ reason: Reason.nonceUsed, message: 'the authorization nonce was submitted with another signature', payer });
      const followed = await follow(ctx, parsed.reader, existing, network, payer);
      if (followed) return followed;
      continue; // the claim was released (its simulation failed): check afresh
    }
    if (!checked.ok) return answer(checked);
  }
  return answer({ reason: Reason.settlementPending, message: 'the authorization is being settled by another request; repeat the settle', payer });
}

async function submit(ctx: SettleContext, c: Checked, claim: ClaimRow, network: string): Promise<SettleResponse> {
  const executor = ctx.executorOf(c.reader);
  const payer = c.auth.from;
  let prepared;
  try {
    prepared = await prepareWithRetry(executor, {
      kind: 'x402',
      orderId: claim.id,
      to: c.req.asset,
      data: transferCalldata(c.auth),
      estimate: (account) => executor.client.estimateContractGas({ address: c.req.asset, abi: eip3009Abi, functionName: 'transferWithAuthorization', args: transferArgs(c.auth), account }),
    });
  } catch (err) {
    // Nothing was recorded (an RPC fault before signing): give the claim back so a retry can settle.
    await releaseClaim(ctx.db, claim.id);
    throw err;
  }
  if (prepared.kind === 'refused') {
    await releaseClaim(ctx.db, claim.id);
    return { success: false, errorReason: await diagnose(c, prepared.error), errorMessage: `simulation reverted: ${prepared.error}`, transaction: '', network, payer };
  }
  return outcome(ctx, executor, c.reader, prepared.record, network, payer);
}

/**
 * Why the simulation reverted, as the reference facilitator diagnoses it: the nonce used on
 * chain, the balance short, else what the revert itself says.
 */
async function diagnose(c: Checked, revert: string): Promise<ReasonCode> {
  const state = await c.reader.state(c.req.asset, c.auth, undefined).catch(() => undefined);
  if (state?.used) return Reason.nonceUsed;
  if (state && state.balance < c.auth.value) return Reason.insufficientBalance;
  return reasonOfRevert(revert);
}

/** The executor's prepare, again when another executor instance took the same nonce (UNIQUE (chain, executor, nonce)). */
async function prepareWithRetry(executor: SettlementExecutor, plan: Parameters<SettlementExecutor['prepareCall']>[0]) {
  for (let i = 0; ; i++) {
    try {
      return await onChain(executor.prepareCall(plan));
    } catch (err) {
      if (i >= 2 || !isPgError(err, UNIQUE_VIOLATION)) throw err;
    }
  }
}

/** Follows the transaction of an existing claim; undefined when the claim disappeared (released). */
async function follow(ctx: SettleContext, reader: ExactEvmChain, claim: ClaimRow, network: string, payer: Hex): Promise<SettleResponse | undefined> {
  const until = Date.now() + ctx.waitMs;
  for (;;) {
    const rec = await findSettlement(ctx.db, claim.chain_id, claim.id, 'x402');
    if (rec) return outcome(ctx, ctx.executorOf(reader), reader, rec, network, payer);
    // The winner is between claiming and recording (simulating, signing): wait for its row.
    if (!(await findClaim(ctx.db, claim))) return undefined;
    if (Date.now() > until) return { success: false, errorReason: Reason.settlementPending, errorMessage: 'the authorization is being settled; repeat the settle', transaction: '', network, payer };
    await new Promise((r) => setTimeout(r, ctx.pollMs));
  }
}

/** Broadcasts a recorded row if needed, then waits for its receipt (at most `waitMs`). */
async function outcome(ctx: SettleContext, executor: SettlementExecutor, reader: ExactEvmChain, rec: SettlementRecord, network: string, payer: Hex): Promise<SettleResponse> {
  const base = { transaction: rec.txHash, network, payer };
  const pending = (why: string): SettleResponse => ({ success: false, errorReason: Reason.settlementPending, errorMessage: why, ...base });
  if (rec.status === 'confirmed') return { success: true, ...base };
  if (rec.status === 'failed') return { success: false, errorReason: Reason.transactionFailed, errorMessage: rec.failureReason ?? 'the transaction failed', ...base };
  if (rec.status === 'pending') {
    try {
      rec = await executor.broadcast(rec);
    } catch {
      // The node refused or was unreachable: the row stays pending and the reconciler sends it.
      return pending('broadcast failed; the recorded transaction will be re-broadcast');
    }
  }
  const until = Date.now() + ctx.waitMs;
  // A node mines (or an L2 sequencer includes) within milliseconds to seconds: ask again soon at
  // first, then every pollMs.
  const delays = [5, 10, 20, 40];
  for (let attempt = 0; ; attempt++) {
    // No receipt yet, or an RPC fault: both leave the outcome unknown, and the loop asks again.
    const receipt = await reader.client.getTransactionReceipt({ hash: rec.txHash }).catch(() => undefined);
    if (receipt) {
      // Let the executor move its row (confirmed at depth, failed when reverted); the reconciler
      // finishes rows that are not deep enough yet. Not awaited on success: the answer does not
      // depend on it.
      if (receipt.status !== 'success') {
        await executor.checkReceipt(rec).catch(() => rec);
        return { success: false, errorReason: Reason.transactionFailed, errorMessage: 'reverted on chain', ...base };
      }
      void executor.checkReceipt(rec).catch(() => rec);
      // x402 answers success on inclusion, as the reference facilitator does.
      return { success: true, ...base };
    }
    if (Date.now() > until) return pending('no receipt yet; repeat the settle to learn the outcome');
    await new Promise((r) => setTimeout(r, Math.min(delays[attempt] ?? ctx.pollMs, ctx.pollMs)));
  }
}
