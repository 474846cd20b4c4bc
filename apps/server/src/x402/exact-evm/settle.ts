import { encodeAbiParameters, keccak256, type Hex } from 'viem';
import type { EvmSigner } from '../../signers/port.ts';
import { isPgError, UNIQUE_VIOLATION } from '../../db/database.ts';
import type { Plan, SettlementExecutor } from '../../settlement/executor.ts';
import { findSettlement, type SettlementRecord } from '../../settlement/repo.ts';
import { claimCompanion, findClaim, type ClaimKey, type ClaimRow } from '../repo.ts';
import { onChain, type SettleOptions } from '../scheme.ts';
import { Reason, type PaymentPayload, type PaymentRequirements, type ReasonCode, type SettleResponse } from '../wire.ts';
import { eip3009Abi } from './abi.ts';
import { transferArgs, transferCalldata, type ExactEvmChain } from './chain.ts';
import { checkPayment, checkScope, checkSignature, parsePayment, type CheckContext, type Checked } from './verify.ts';

export interface SettleContext extends CheckContext {
  signer: EvmSigner | undefined;
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
 * The claim id of an authorization: a function of (chain, token, payer, nonce), so every settle of
 * it — in any process — names the same executor row (`settlements.order_id`).
 */
function claimIdOf(k: ClaimKey): string {
  const h = keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }, { type: 'address' }, { type: 'bytes32' }], [BigInt(k.chain_id), k.token as Hex, k.payer as Hex, k.nonce as Hex]));
  return `x4a_${h.slice(2, 34)}`;
}

type Answer = (r: { reason: ReasonCode; message: string }) => SettleResponse;

/**
 * Settles one x402 `exact` EIP-3009 payment, at most once per authorization:
 *   1. the off-chain checks (recipient, window, amount) run;
 *   2. the executor simulates `transferWithAuthorization` (the token checks the payer's signature
 *      there: a forged one is refused as invalid_exact_evm_signature), signs it with its next nonce, and
 *      records it (`settlements`, kind x402) in ONE statement with the authorization's
 *      claim (UNIQUE chain, token, payer, nonce) — before anything is broadcast. A concurrent or
 *      repeated settle of the authorization finds that row and follows it; the same nonce with
 *      another signature is refused. A process killed after recording leaves a row the
 *      reconciler re-broadcasts (the same bytes);
 *   3. the answer waits for the receipt; none within `waitMs` → `settlement_pending` with the
 *      transaction hash (the reference facilitator's answer for an unknown outcome), and a
 *      repeated settle of the same payload later answers with that same transaction.
 */
export async function settlePayment(ctx: SettleContext, payload: PaymentPayload, requirements: PaymentRequirements, opts: SettleOptions = {}): Promise<SettleResponse> {
  const network = requirements.network;
  const parsed = parsePayment(ctx, payload, requirements);
  const payer = 'ok' in parsed ? undefined : parsed.auth.from;
  const answer: Answer = (r) => ({ success: false, errorReason: r.reason, errorMessage: r.message, transaction: '', network, ...(payer ? { payer } : {}) });
  if ('ok' in parsed) return answer(parsed);
  if (!ctx.signer) return answer({ reason: Reason.settlementDisabled, message: 'this gateway has no executor key (SETTLEMENT_KEY): it verifies but does not settle' });
  // A machine-payment challenge's recipient was priced by its merchant on this gateway: in scope.
  if (opts.challengeId === undefined) {
    const refused = await checkScope(ctx, parsed.req, parsed.auth.from);
    if (refused) return answer(refused);
  }
  const key: ClaimKey = { chain_id: parsed.req.chainId, token: parsed.req.asset, payer: parsed.auth.from, nonce: parsed.auth.nonce };
  // A repeat of a payload settled before (possibly expired since) gets its transaction back without
  // new checks or the executor — but only for requirements it pays (the same recipient and price:
  // one payment cannot answer for another resource). Anything else with this nonce is refused.
  const existing = await findClaim(ctx.db, key);
  if (existing) {
    const same = existing.signature === parsed.auth.signature && existing.recipient === parsed.req.payTo && BigInt(existing.amount) === parsed.req.amount;
    if (same) return follow(ctx, parsed.reader, existing, network, parsed.auth.from, answer);
    return answer({ reason: Reason.nonceUsed, message: 'the authorization was already submitted for settlement' });
  }
  const checked = await checkPayment(ctx, payload, requirements, { offChainOnly: true, signatureBySimulation: true, scopeChecked: true });
  if (!checked.ok) return answer(checked);
  return submit(ctx, checked, key, network, answer, opts.challengeId ?? null);
}

async function submit(ctx: SettleContext, c: Checked, key: ClaimKey, network: string, answer: Answer, challengeId: string | null): Promise<SettleResponse> {
  const executor = ctx.executorOf(c.reader);
  const id = claimIdOf(key);
  // The gas estimate (the simulation) needs no nonce: it starts before the executor's nonce lock,
  // so the lock is held for the nonce, fee and record steps only (concurrent settles queue less).
  const estimated = executor.client.estimateContractGas({ address: c.req.asset, abi: eip3009Abi, functionName: 'transferWithAuthorization', args: transferArgs(c.auth), account: executor.executorAddress }).then(
    (gas) => ({ gas }),
    (err: unknown) => ({ err }),
  );
  const prepared = await prepareWithRetry(executor, {
    kind: 'x402',
    orderId: id,
    to: c.req.asset,
    data: transferCalldata(c.auth),
    estimate: async () => {
      const r = await estimated;
      if ('err' in r) throw r.err;
      return r.gas;
    },
    companion: claimCompanion({
      id,
      ...key,
      recipient: c.auth.to,
      amount: c.auth.value.toString(),
      valid_before: c.auth.validBefore.toString(),
      signature: c.auth.signature,
      challenge_id: challengeId,
    }),
  });
  if (prepared.kind === 'refused' || prepared.kind === 'existing') {
    // A concurrent settle of the same payload won (in this process or another): it recorded the
    // claim, and when its transaction is already mined our simulation reverts (nonce used). The
    // same payload for the same terms follows the winner's transaction either way.
    const claim = await findClaim(ctx.db, key);
    const same = claim?.signature === c.auth.signature && claim.recipient === c.req.payTo && BigInt(claim.amount) === c.req.amount;
    if (prepared.kind === 'refused') {
      if (claim && same) return follow(ctx, c.reader, claim, network, c.auth.from, answer);
      return answer({ reason: await diagnose(c, prepared.error), message: `simulation reverted: ${prepared.error}` });
    }
    if (!same) return answer({ reason: Reason.nonceUsed, message: 'the authorization was already submitted for settlement' });
  }
  return outcome(ctx, executor, c.reader, prepared.record, network, c.auth.from);
}

/**
 * Why the simulation reverted, as the reference facilitator diagnoses it: the nonce used on
 * chain, the balance short, else what the revert itself says — and when it says nothing we can
 * read (a token's custom error outside our ABI), the signature checked off-chain: settle leaves
 * the signature to the simulation, so a refused settle is where its recovery is paid for.
 */
async function diagnose(c: Checked, revert: string): Promise<ReasonCode> {
  const state = await c.reader.state(c.req.asset, c.auth, undefined).catch(() => undefined);
  if (state?.used) return Reason.nonceUsed;
  if (state && state.balance < c.auth.value) return Reason.insufficientBalance;
  const reason = reasonOfRevert(revert);
  if (reason !== Reason.simulationFailed) return reason;
  const bad = await checkSignature(c).catch(() => undefined);
  return bad?.reason ?? reason;
}

/** The executor's prepare, again when another executor instance took the same nonce (UNIQUE (chain, executor, nonce)). */
async function prepareWithRetry(executor: SettlementExecutor, plan: Plan & { to: Hex }) {
  for (let i = 0; ; i++) {
    try {
      return await onChain(executor.prepareCall(plan));
    } catch (err) {
      if (i >= 2 || !isPgError(err, UNIQUE_VIOLATION)) throw err;
    }
  }
}

/** The transaction of a claim found by a repeated settle (claim and row are written together). */
async function follow(ctx: SettleContext, reader: ExactEvmChain, claim: ClaimRow, network: string, payer: Hex, answer: Answer): Promise<SettleResponse> {
  const rec = await findSettlement(ctx.db, claim.chain_id, claim.id, 'x402');
  if (!rec) return answer({ reason: Reason.transactionFailed, message: 'the authorization was claimed but has no transaction' });
  return outcome(ctx, ctx.executorOf(reader), reader, rec, network, payer);
}

/** Broadcasts a recorded row if needed, then waits for its receipt (at most `waitMs`). */
async function outcome(ctx: SettleContext, executor: SettlementExecutor, reader: ExactEvmChain, rec: SettlementRecord, network: string, payer: Hex): Promise<SettleResponse> {
  const base = { transaction: rec.txHash, network, payer };
  const pending = (why: string): SettleResponse => ({ success: false, errorReason: Reason.settlementPending, errorMessage: why, ...base });
  if (rec.status === 'confirmed') return { success: true, ...base };
  if (rec.status === 'failed') return { success: false, errorReason: Reason.transactionFailed, errorMessage: rec.failureReason ?? 'the transaction failed', ...base };
  if (rec.status === 'pending') {
    try {
      await executor.send(rec);
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
