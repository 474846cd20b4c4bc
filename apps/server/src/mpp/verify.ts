import type { Hex } from 'viem';
import { CHAIN_CLOCK_SKEW_MS } from '../orders/claims.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { TransferLog } from '../chain/evm/rpc.ts';
import type { MinedTx, TxLookup } from './chain.ts';
import { indexedTransfers } from './indexed.ts';
import { signatureProvesPayer, type PayerProof } from './payment/proof.ts';
import { challengeMac, checkChallengeId, macEquals, type MacKeys } from './mac.ts';
import type { ClaimWriter } from './claims.ts';
import type { ChallengeReader } from './reads.ts';
import { decodeClaims, type ReceiptClaims, type ReceiptSigner } from './receipts.ts';
import * as repo from './repo.ts';

/**
 * The verification core shared by every front door (/mpp/v1/verify, the `Payment` scheme).
 *
 * It promises: a receipt only for a transfer of the challenge's token, from its payer, to its
 * recipient, of at least its price, in a successful transaction mined no earlier than the second
 * the challenge was issued (less the chain's clock skew, CHAIN_CLOCK_SKEW_MS) and no later than its expiry, and at least `finality_confirmations`
 * deep; each (chain, tx, log index) pays at most one challenge and each challenge is paid once,
 * both enforced by the database (primary key of the claims ledger transfer_claims, conditional update of the challenge)
 * so that concurrent verifies in several processes cannot both win; repeats are idempotent.
 *
 * It refuses, before any chain read: a forged id or MAC, another payer, an open challenge whose
 * credential does not prove its payer (payment/proof.ts), a consumed challenge, a challenge past its
 * expiry plus VERIFY_GRACE_SECONDS. A transfer mined in time may finish
 * becoming final after the expiry (a slow chain must not cost a payer who paid in time); a
 * transaction not mined by the expiry is refused as expired.
 *
 * Timestamps are block timestamps (1 s granularity): a transfer mined in the same second the
 * challenge was issued counts as after it.
 */
export const VERIFY_GRACE_SECONDS = 600;

export type VerifyOutcome =
  | { kind: 'pending'; status: 'pending_inclusion' | 'pending_finality'; retryAfterSeconds: number }
  | { kind: 'paid'; claims: ReceiptClaims; jws: string; transfer: PaidTransfer }
  | { kind: 'invalid_mac' }
  | { kind: 'challenge_not_found' }
  | { kind: 'payer_mismatch' }
  | { kind: 'payer_proof_required' }
  | { kind: 'payer_proof_invalid' }
  | { kind: 'challenge_expired' }
  | { kind: 'challenge_already_consumed' }
  | { kind: 'tx_already_claimed' }
  | { kind: 'transfer_not_found'; reason: string }
  | { kind: 'chain_unavailable' }
  | { kind: 'request_mismatch' };

/** The transfer a receipt attests beyond its claims (GOAT's receipt format states these too). */
interface PaidTransfer {
  tokenContract: string;
  blockNumber: number;
  /** Unix seconds. */
  blockTimestamp: number;
}

export interface VerifyInput {
  challengeId: string;
  txHash: string;
  payerAddr: string;
  /** The challenge MAC; the `Payment` scheme passes the stored one (its credential echoes the challenge instead). */
  mac: string | undefined;
  /** The `Payment` scheme: the request the credential is presented for must be the challenge's. */
  expect?: { merchantId: string; routeCanonical: string; requestCanonical: string };
  /**
   * What proves the payer controls `payerAddr`, required by an open challenge (no payer bound at
   * issue): without it anyone could name the sender of a transfer they saw on the chain.
   */
  payerProof?: PayerProof | undefined;
}

export class PaymentVerifier {
  /** The challenges' realm (the host of PUBLIC_BASE_URL), which a payer proof signs. */
  private readonly realm: string;
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly keys: MacKeys;
  private readonly receipts: ReceiptSigner;
  private readonly lookups: (chainId: number) => TxLookup | undefined;
  private readonly reads: ChallengeReader;
  private readonly claims: ClaimWriter;

  constructor(db: Database, config: Config, clock: Clock, keys: MacKeys, receipts: ReceiptSigner, lookups: (chainId: number) => TxLookup | undefined, reads: ChallengeReader, claims: ClaimWriter) {
    this.db = db;
    this.config = config;
    this.clock = clock;
    this.keys = keys;
    this.receipts = receipts;
    this.lookups = lookups;
    this.reads = reads;
    this.claims = claims;
    this.realm = new URL(config.publicBaseUrl).host;
  }

  /**
   * The checks of a credential against its stored challenge that need no chain: the id and MAC,
   * the request it is presented for, the payer (an open challenge takes the credential's).
   */
  async precheck(
    input: Omit<VerifyInput, 'txHash'>,
    load: (id: string) => Promise<repo.ChallengeRow | undefined> = (id) => repo.getChallenge(this.db, id),
  ): Promise<{ kind: 'ok'; row: repo.ChallengeRow; payer: string; expiresSec: number } | { kind: 'refused'; outcome: VerifyOutcome }> {
    const refused = (outcome: VerifyOutcome) => ({ kind: 'refused' as const, outcome });
    if (checkChallengeId(this.keys, input.challengeId) === undefined) return refused({ kind: 'invalid_mac' });
    const row = await load(input.challengeId);
    if (!row) return refused({ kind: 'challenge_not_found' });
    const expiresSec = Math.floor(row.expires_at.getTime() / 1000);
    const expected = challengeMac(this.keys, {
      challengeId: row.id,
      merchantId: row.merchant_id,
      routeCanonical: row.route_canonical,
      requestCanonical: row.request_canonical,
      payerAddr: row.payer_addr,
      chainId: row.chain_id,
      tokenContract: row.token_contract,
      recipient: row.recipient,
      amountWei: row.amount_wei,
      routePricingVersion: row.route_pricing_version,
      expiresAtSec: expiresSec,
    });
    // The stored row must still match its MAC (a row edited in the database is not honoured).
    if (!macEquals(expected, row.mac) || (input.mac !== undefined && !macEquals(input.mac, row.mac))) return refused({ kind: 'invalid_mac' });
    const e = input.expect;
    if (e && (e.merchantId !== row.merchant_id || e.routeCanonical !== row.route_canonical || e.requestCanonical !== row.request_canonical)) {
      return refused({ kind: 'request_mismatch' });
    }
    // An open challenge ('' payer, `Payment` scheme) takes the payer its credential names.
    const payer = row.payer_addr || input.payerAddr.toLowerCase();
    if (input.payerAddr.toLowerCase() !== payer || !/^0x[0-9a-f]{40}$/.test(payer)) return refused({ kind: 'payer_mismatch' });
    if (!row.payer_addr) {
      const proof = input.payerProof;
      if (!proof) return refused({ kind: 'payer_proof_required' });
      if (proof.kind === 'signature' && !(await signatureProvesPayer(proof.signature, { account: payer, chainId: row.chain_id, challengeId: row.id, realm: this.realm }))) {
        return refused({ kind: 'payer_proof_invalid' });
      }
    }
    return { kind: 'ok', row, payer, expiresSec };
  }

  async verify(input: VerifyInput): Promise<VerifyOutcome> {
    const tx = input.txHash.toLowerCase();
    // The challenge and the watcher's records of the transaction, read together (one statement,
    // shared with concurrent verifies: mpp/reads.ts).
    let withIndexed: repo.ChallengeWithIndexed | undefined;
    const pre = await this.precheck(input, async (id) => (withIndexed = await this.reads.read(id, tx)));
    if (pre.kind !== 'ok') return pre.outcome;
    const { row, payer, expiresSec } = pre;
    if (row.status === 'PAID') return this.paidOrConsumed(row, tx, payer);

    const nowSec = Math.floor(this.clock.now() / 1000);
    if (nowSec > expiresSec + VERIFY_GRACE_SECONDS) return { kind: 'challenge_expired' };
    const chain = this.config.chains.find((c) => c.chainId === row.chain_id);
    const lookup = this.lookups(row.chain_id);
    if (!chain || !lookup) return { kind: 'chain_unavailable' };
    const retryAfterSeconds = Math.max(1, Math.ceil(chain.pollIntervalMs / 1000));

    // The watcher's index first (one query); the node only when the index cannot prove the payment final.
    // A block's timestamp may trail this machine's clock (CHAIN_CLOCK_SKEW_MS): a transfer sent after
    // the challenge can carry an earlier second. Each transfer still pays one purpose (claims ledger).
    const issuedSec = BigInt(Math.floor((row.issued_at.getTime() - CHAIN_CLOCK_SKEW_MS) / 1000));
    const indexed = withIndexed ? indexedTransfers(withIndexed.idx_transfers, withIndexed.idx_cursor, tx as Hex) : undefined;
    let judged = indexed ? judge(indexed, row, payer, issuedSec, BigInt(expiresSec), chain.finalityConfirmations, retryAfterSeconds) : undefined;
    if (judged?.kind !== 'final') {
      let mined;
      try {
        mined = await lookup.getMinedTransfers(tx as Hex);
      } catch {
        return { kind: 'chain_unavailable' };
      }
      if (!mined) return nowSec > expiresSec ? { kind: 'challenge_expired' } : { kind: 'pending', status: 'pending_inclusion', retryAfterSeconds };
      judged = judge(mined, row, payer, issuedSec, BigInt(expiresSec), chain.finalityConfirmations, retryAfterSeconds);
      if (judged.kind !== 'final') return judged;
    }
    const { enough, mined } = judged;

    const sign = await this.receipts.activeSigner();
    // One claim per candidate transfer (lowest log index first): it marks the challenge paid,
    // inserts the claim and writes the event together, or none of them (repo.claimTransfers for
    // the concurrency; group-committed with concurrent verifies' claims by mpp/claims.ts).
    for (const t of enough) {
      const claims: ReceiptClaims = {
        challenge_id: row.id,
        merchant_id: row.merchant_id,
        route_canonical: row.route_canonical,
        request_canonical: row.request_canonical,
        chain_id: row.chain_id,
        tx_hash: tx,
        log_index: t.logIndex,
        amount_wei: t.value.toString(),
        payer,
        recipient: row.recipient,
        finality: chain.finalityConfirmations,
        issued_at: Math.floor(this.clock.now() / 1000),
      };
      const jws = sign(claims);
      const r = await this.claims.claim({
        merchantId: row.merchant_id,
        claims,
        id: row.id,
        chainId: row.chain_id,
        txHash: tx,
        logIndex: t.logIndex,
        blockNumber: mined.blockNumber,
        paidAmountWei: t.value,
        receiptJws: jws,
        paidAt: new Date(this.clock.now()),
        token: t.token,
        payer: t.from,
        recipient: t.to,
        blockTime: new Date(Number(mined.blockTimestamp) * 1000),
      });
      if (r === 'claimed') {
        return { kind: 'paid', claims, jws, transfer: { tokenContract: row.token_contract, blockNumber: Number(mined.blockNumber), blockTimestamp: Number(mined.blockTimestamp) } };
      }
      if (r === 'not_open') {
        // Paid meanwhile (a concurrent verify of this challenge): its receipt, or consumed by another tx.
        const now = await repo.getChallenge(this.db, row.id);
        return now ? this.paidOrConsumed(now, tx, payer) : { kind: 'challenge_not_found' };
      }
      // 'transfer_taken': this log is spent (claims ledger) or a live order outranks the challenge for it; try the next matching one.
    }
    return { kind: 'tx_already_claimed' };
  }

  private paidOrConsumed(row: repo.ChallengeRow, tx: string, payer: string): VerifyOutcome {
    if (row.tx_hash !== tx || !row.receipt_jws) return { kind: 'challenge_already_consumed' };
    const claims = decodeClaims(row.receipt_jws);
    if (claims.payer !== payer) return { kind: 'payer_mismatch' };
    const blockTime = row.block_time ?? row.paid_at!;
    const transfer = { tokenContract: row.token_contract, blockNumber: Number(row.block_number), blockTimestamp: Math.floor(blockTime.getTime() / 1000) };
    return { kind: 'paid', claims, jws: row.receipt_jws, transfer };
  }
}

/**
 * What a mined transaction means for a challenge: a refusal, pending finality, or the matching
 * transfers (lowest log index first) of a final transaction.
 */
function judge(mined: MinedTx, row: repo.ChallengeRow, payer: string, issuedSec: bigint, expiresSec: bigint, finality: number, retryAfterSeconds: number): VerifyOutcome | { kind: 'final'; enough: TransferLog[]; mined: MinedTx } {
  if (mined.status !== 'success') return { kind: 'transfer_not_found', reason: 'the transaction reverted' };
  if (mined.blockTimestamp > expiresSec) return { kind: 'challenge_expired' };
  if (mined.blockTimestamp < issuedSec) return { kind: 'transfer_not_found', reason: 'the transaction was mined before the challenge was issued' };
  const price = BigInt(row.amount_wei);
  const toUs = mined.transfers.filter((t) => t.token === row.token_contract && t.to === row.recipient && t.from === payer);
  const enough = toUs.filter((t) => t.value >= price).sort((a, b) => a.logIndex - b.logIndex);
  if (enough.length === 0) {
    return {
      kind: 'transfer_not_found',
      reason: toUs.length ? `the transfer of ${toUs[0]!.value} is less than the price ${price}` : 'the transaction holds no transfer of the token from the payer to the recipient',
    };
  }
  const depth = mined.head - mined.blockNumber + 1n;
  if (depth < BigInt(finality)) return { kind: 'pending', status: 'pending_finality', retryAfterSeconds };
  return { kind: 'final', enough, mined };
}
