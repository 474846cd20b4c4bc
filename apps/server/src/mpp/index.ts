import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { MerchantService } from '../merchants/service.ts';
import { chainById } from '../chain/registry.ts';
import type { BatchStats } from '../db/batcher.ts';
import type { TxLookup } from './chain.ts';
import { ClaimWriter } from './claims.ts';
import { ChallengeReader } from './reads.ts';
import { ChallengeIssuer } from './challenges.ts';
import { deriveMacKeys } from './mac.ts';
import { RoutePricing } from './pricing.ts';
import { ReceiptSigner } from './receipts.ts';
import { PaymentVerifier, VERIFY_GRACE_SECONDS } from './verify.ts';
import { AuthorizationPayments, type Settler } from './authorization.ts';
import { listPaidChallenges, pruneExpiredChallenges, type ChallengeRow } from './repo.ts';

/**
 * Machine payments, as the composition root wires them: route prices, challenges, the verify core
 * and receipts. Front doors (the /mpp/v1 routes, the `Payment` scheme) use these and nothing else.
 */
export interface Mpp {
  pricing: RoutePricing;
  challenges: ChallengeIssuer;
  verifier: PaymentVerifier;
  receipts: ReceiptSigner;
  /** `authorization` credentials of the `Payment` scheme: settled, then verified by `verifier`. */
  authorizations: AuthorizationPayments;
  /** The merchant's paid machine payments, newest first. */
  payments(merchantId: string, limit: number, before?: Date): Promise<ChallengeRow[]>;
  /** The verify's group commit of claims (the metrics of http/observability.ts). */
  claimBatchStats(): BatchStats;
  /** The verify's coalesced reads (idem). */
  readBatchStats(): BatchStats;
  /** Deletes unpaid challenges past expiry + verify grace + one hour (the worker calls it). */
  pruneExpired(): Promise<number>;
}

/** `settler`: the x402 facilitator, which settles EIP-3009 authorizations through the executor. */
export function createMpp(db: Database, config: Config, merchants: MerchantService, clock: Clock, settler: Settler): Mpp {
  const keys = deriveMacKeys(config.masterKey);
  const pricing = new RoutePricing(db, config, merchants);
  const receipts = new ReceiptSigner(db, config.masterKey);
  // One JSON-RPC client per configured chain, made on first use (routes that never verify open none).
  const lookups = new Map<number, TxLookup>();
  const lookupOf = (chainId: number): TxLookup | undefined => {
    const c = chainById(config, chainId);
    if (!c?.family.txLookup) return undefined;
    let l = lookups.get(chainId);
    if (!l) lookups.set(chainId, (l = c.family.txLookup(c.chain)));
    return l;
  };
  const reads = new ChallengeReader(db);
  const claims = new ClaimWriter(db);
  const verifier = new PaymentVerifier(db, config, clock, keys, receipts, lookupOf, reads, claims);
  return {
    pricing,
    challenges: new ChallengeIssuer(db, config, clock, keys, pricing),
    verifier,
    receipts,
    authorizations: new AuthorizationPayments(db, config, clock, verifier, settler),
    claimBatchStats: () => claims.stats(),
    readBatchStats: () => reads.stats(),
    payments: (merchantId, limit, before) => listPaidChallenges(db, merchantId, limit, before),
    // The hour past the grace keeps a refused verify answering challenge_expired (not
    // challenge_not_found) for a while after the last moment it could have succeeded.
    pruneExpired: () => pruneExpiredChallenges(db, new Date(clock.now() - (VERIFY_GRACE_SECONDS + 3600) * 1000)),
  };
}
