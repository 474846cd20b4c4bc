import { keccak256, stringToBytes, type Hex } from 'viem';
import type { Config } from '../config/schema.ts';
import type { SettleOptions } from '../x402/scheme.ts';
import type { FacilitatorRequest, SettleResponse } from '../x402/wire.ts';
import type { AuthorizationPayload } from './payment/credential.ts';
import type { PaymentVerifier, VerifyOutcome } from './verify.ts';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/database.ts';
import { findClaim } from '../x402/repo.ts';

/**
 * The `authorization` credential of the `Payment` scheme (mppx's EVM charge method): the payer
 * signs an EIP-3009 `transferWithAuthorization` of the price to the recipient, with
 * `nonce = keccak256(challenge id ‖ realm)` (binding the signature to this one challenge), and the
 * gateway settles it.
 *
 * Settling reuses the x402 facilitator's `exact` EVM settle (the same checks — signature against
 * the token's EIP-712 domain, recipient, amount, validity window with ≥ 6 s left, simulation — the
 * DELEGATE executor's nonce management, the authorization claimed once per (chain, token, payer,
 * nonce) in the statement that records the transaction before it is broadcast, and an unknown
 * outcome reported as pending with its transaction hash). The transaction it yields is then
 * verified by the same core as a `hash` credential naming it: per-chain finality, the claim per
 * (chain, tx, log index), the signed receipt. A repeated credential finds its claim and follows the
 * same transaction, so a client that retries after 202 gets the receipt once it is final.
 */
export type AuthorizationOutcome =
  /** The verify of the settlement transaction (`txHash`). */
  | (VerifyOutcome & { txHash?: string })
  /** Settlement submitted, not mined yet (or its outcome unknown): retry the same credential. */
  | { kind: 'settling'; txHash: string | undefined; retryAfterSeconds: number }
  | { kind: 'authorization_refused'; message: string; used: boolean };

export interface Settler {
  settle(body: FacilitatorRequest, opts: SettleOptions): Promise<SettleResponse>;
}

/** keccak256(id ‖ realm) as mppx computes it (`Types.challengeHash`). */
function challengeNonce(challengeId: string, realm: string): Hex {
  return keccak256(stringToBytes(`${challengeId}${realm}`));
}

export class AuthorizationPayments {
  private readonly realm: string;
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly verifier: PaymentVerifier;
  private readonly settler: Settler;

  constructor(db: Database, config: Config, clock: Clock, verifier: PaymentVerifier, settler: Settler) {
    this.db = db;
    this.config = config;
    this.clock = clock;
    this.verifier = verifier;
    this.settler = settler;
    this.realm = new URL(config.publicBaseUrl).host;
  }

  async pay(input: { challengeId: string; authorization: AuthorizationPayload; expect: { merchantId: string; routeCanonical: string; requestCanonical: string } }): Promise<AuthorizationOutcome> {
    const a = input.authorization;
    // The challenge checks of verify (id, MAC, request, payer, consumed, expired) before anything
    // is sent: a verify of a transaction that cannot exist yet answers them without a chain read.
    // The authorization is its own payer proof on an open challenge (payment/proof.ts): its nonce
    // binds the payer's signature to this challenge, and nothing moves unless the token accepts it.
    const payerProof = { kind: 'authorization' as const };
    const pre = await this.verifier.precheck({ challengeId: input.challengeId, payerAddr: a.from, mac: undefined, expect: input.expect, payerProof });
    if (pre.kind !== 'ok') return pre.outcome;
    const row = pre.row;
    if (row.status === 'OPEN' && this.clock.now() > row.expires_at.getTime()) return { kind: 'challenge_expired' };
    // A paid challenge: only the authorization that paid it may be presented again (it follows its
    // transaction); any other is refused before anything is sent — it would move the payer's money
    // for a challenge that can no longer be paid.
    if (row.status === 'PAID' && !(await findClaim(this.db, { chain_id: row.chain_id, token: row.token_contract, payer: a.from, nonce: a.nonce }))) {
      return { kind: 'challenge_already_consumed' };
    }
    const chain = this.config.chains.find((c) => c.chainId === row.chain_id);
    const token = chain?.tokens.find((t) => t.address.toLowerCase() === row.token_contract);
    if (!chain || !token?.eip3009 || !this.config.settlement) {
      return { kind: 'authorization_refused', used: false, message: 'this challenge cannot be paid with an authorization (the token has no EIP-3009 or the gateway has no executor key); pay it and send a hash credential' };
    }
    const refuse = (message: string): AuthorizationOutcome => ({ kind: 'authorization_refused', used: false, message });
    if (a.nonce !== challengeNonce(row.id, this.realm)) return refuse('the authorization nonce is not keccak256(challenge id ‖ realm) of this challenge');
    if (a.to !== row.recipient) return refuse('the authorization pays another recipient than the challenge');
    if (a.value !== row.amount_wei) return refuse('the authorization value is not the challenge amount');
    if (BigInt(a.validBefore) > BigInt(Math.floor(row.expires_at.getTime() / 1000))) return refuse('validBefore is after the challenge expiry');

    const requirements = {
      scheme: 'exact',
      network: `eip155:${row.chain_id}`,
      amount: row.amount_wei,
      asset: row.token_contract,
      payTo: row.recipient,
      maxTimeoutSeconds: Math.max(1, Math.floor((row.expires_at.getTime() - row.issued_at.getTime()) / 1000)),
      extra: { assetTransferMethod: 'eip3009' },
    };
    const settled = await this.settler.settle(
      {
        x402Version: 2,
        paymentRequirements: requirements,
        paymentPayload: {
          x402Version: 2,
          accepted: requirements,
          payload: { authorization: { from: a.from, to: a.to, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce }, signature: a.signature },
        },
      },
      { challengeId: row.id },
    );
    const retryAfterSeconds = Math.max(1, Math.ceil(chain.pollIntervalMs / 1000));
    if (!settled.success) {
      if (settled.errorReason === 'settlement_pending') return { kind: 'settling', txHash: settled.transaction || undefined, retryAfterSeconds };
      if (settled.errorReason === 'transaction_failed') return refuse(`the settlement transaction failed: ${settled.errorMessage ?? 'reverted'}`);
      return { kind: 'authorization_refused', used: /nonce/i.test(settled.errorReason ?? ''), message: settled.errorMessage ?? settled.errorReason ?? 'refused' };
    }
    // Mined: the verify core decides finality and claims the transfer for this challenge.
    return { ...(await this.verifier.verify({ challengeId: row.id, txHash: settled.transaction, payerAddr: a.from, mac: undefined, expect: input.expect, payerProof })), txHash: settled.transaction };
  }
}
