import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { getMerchant } from '../merchants/repo.ts';
import { requestExtendsRoute } from './canonical.ts';
import { challengeMac, newChallengeId, type MacKeys } from './mac.ts';
import type { RoutePricing } from './pricing.ts';
import * as repo from './repo.ts';
import { serializeChallenge } from './payment/header.ts';

/**
 * How long a challenge can be answered. Five minutes covers sending a transfer and its inclusion on
 * the configured chains; verification of a transfer mined in time may finish later (see verify.ts).
 */
const CHALLENGE_TTL_SECONDS = 300;

/** The 402 body of `POST /mpp/v1/challenge` (docs/machine-payments.md, section 2). */
interface ChallengeBody {
  challenge_id: string;
  expiry: number;
  amount_wei: string;
  chain_id: number;
  token_contract: string;
  recipient: string;
  mac: string;
  route_pricing_version: number;
}

export type IssueOutcome = { kind: 'issued'; body: ChallengeBody; wwwAuthenticate: string } | { kind: 'merchant_not_found' } | { kind: 'route_not_priced' } | { kind: 'invalid_request_canonical' };

export interface IssueInput {
  merchantId: string;
  routeCanonical: string;
  requestCanonical: string;
  /**
   * The payer the challenge is bound to. Absent (the `Payment` scheme, where a client asks before
   * it names itself): an open challenge, paid by whichever address its credential names — see
   * docs/machine-payments.md for what that gives up.
   */
  payerAddr?: string | undefined;
}

/** Issues challenges: reads the route price, binds the terms into id and MAC, stores the row. */
export class ChallengeIssuer {
  private readonly realm: string;
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly keys: MacKeys;
  private readonly pricing: RoutePricing;

  constructor(db: Database, config: Config, clock: Clock, keys: MacKeys, pricing: RoutePricing) {
    this.db = db;
    this.config = config;
    this.clock = clock;
    this.keys = keys;
    this.pricing = pricing;
    this.realm = new URL(config.publicBaseUrl).host;
  }

  /**
   * `hash` always; `authorization` too when the gateway can settle an EIP-3009 signature for this
   * token (the token is marked `eip3009` and an executor key is configured).
   */
  private credentialTypes(chainId: number, token: string): string[] {
    const t = this.config.chains.find((c) => c.chainId === chainId)?.tokens.find((x) => x.address.toLowerCase() === token);
    return t?.eip3009 && this.config.settlement ? ['hash', 'authorization'] : ['hash'];
  }

  async issue(input: IssueInput): Promise<IssueOutcome> {
    if (!requestExtendsRoute(input.requestCanonical, input.routeCanonical)) return { kind: 'invalid_request_canonical' };
    const route = await this.pricing.getRoute(input.merchantId, input.routeCanonical);
    if (!route || !this.pricing.isPayable(route)) {
      return (await getMerchant(this.db, input.merchantId)) ? { kind: 'route_not_priced' } : { kind: 'merchant_not_found' };
    }
    const nowMs = this.clock.now();
    const expiresAtSec = Math.floor(nowMs / 1000) + CHALLENGE_TTL_SECONDS;
    const id = newChallengeId(this.keys, expiresAtSec);
    const payer = input.payerAddr?.toLowerCase() ?? '';
    const mac = challengeMac(this.keys, {
      challengeId: id,
      merchantId: route.merchant_id,
      routeCanonical: route.route_canonical,
      requestCanonical: input.requestCanonical,
      payerAddr: payer,
      chainId: route.chain_id,
      tokenContract: route.token_contract,
      recipient: route.recipient,
      amountWei: route.amount_wei,
      routePricingVersion: route.version,
      expiresAtSec,
    });
    await repo.insertChallenge(this.db, {
      id,
      merchant_id: route.merchant_id,
      route_canonical: route.route_canonical,
      request_canonical: input.requestCanonical,
      payer_addr: payer,
      chain_id: route.chain_id,
      token_contract: route.token_contract,
      recipient: route.recipient,
      amount_wei: route.amount_wei,
      route_pricing_version: route.version,
      mac,
      issued_at: new Date(nowMs),
      expires_at: new Date(expiresAtSec * 1000),
    });
    const decimals = this.config.chains.find((c) => c.chainId === route.chain_id)?.tokens.find((t) => t.symbol === route.token_symbol)?.decimals;
    const wwwAuthenticate = serializeChallenge({
      id,
      realm: this.realm,
      method: 'evm',
      intent: 'charge',
      request: {
        amount: route.amount_wei,
        currency: route.token_contract,
        recipient: route.recipient,
        methodDetails: { chainId: route.chain_id, credentialTypes: this.credentialTypes(route.chain_id, route.token_contract), decimals },
      },
      expires: new Date(expiresAtSec * 1000).toISOString(),
    });
    return {
      kind: 'issued',
      wwwAuthenticate,
      body: {
        challenge_id: id,
        expiry: expiresAtSec,
        amount_wei: route.amount_wei,
        chain_id: route.chain_id,
        token_contract: route.token_contract,
        recipient: route.recipient,
        mac,
        route_pricing_version: route.version,
      },
    };
  }
}
