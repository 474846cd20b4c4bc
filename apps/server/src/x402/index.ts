import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { sharedExecutor } from '../settlement/executors.ts';
import { emitConfirmedEvents } from './records.ts';
import { ExactEvmScheme, type ExactEvmOptions } from './exact-evm/index.ts';
import type { SettleOptions, X402Scheme } from './scheme.ts';
import { Reason, type FacilitatorRequest, type SettleResponse, type SupportedResponse, type VerifyResponse } from './wire.ts';

/**
 * The x402 v2 facilitator (docs/machine-payments.md section 7): `supported`, `verify` and `settle`
 * dispatched to the scheme implementation serving the requirements' scheme and network.
 */
export class X402Facilitator {
  private readonly schemes: readonly X402Scheme[];
  readonly reconcile: () => Promise<void>;
  constructor(
    schemes: readonly X402Scheme[],
    /** Finishes unfinished x402 transactions (re-broadcast, receipts); the worker calls it. */
    reconcile: () => Promise<void> = async () => {},
  ) {
    this.schemes = schemes;
    this.reconcile = reconcile;
  }

  supported(): SupportedResponse {
    const kinds: SupportedResponse['kinds'] = [];
    const signers: Record<string, string[]> = {};
    for (const s of this.schemes) {
      const networks = s.networks();
      const addrs = s.signers();
      // A scheme that cannot settle (no executor key) is not advertised: a resource server would
      // accept payments it can never collect.
      if (networks.length === 0 || addrs.length === 0) continue;
      for (const network of networks) kinds.push({ x402Version: 2, scheme: s.scheme, network });
      signers[s.family] = [...new Set([...(signers[s.family] ?? []), ...addrs])];
    }
    return { kinds, extensions: [], signers };
  }

  async verify(body: FacilitatorRequest): Promise<VerifyResponse> {
    const pick = this.#pick(body);
    if ('reason' in pick) return { isValid: false, invalidReason: pick.reason, invalidMessage: pick.message };
    return pick.verify(body.paymentPayload, body.paymentRequirements);
  }

  async settle(body: FacilitatorRequest, opts: SettleOptions = {}): Promise<SettleResponse> {
    const pick = this.#pick(body);
    if ('reason' in pick) return { success: false, errorReason: pick.reason, errorMessage: pick.message, transaction: '', network: body.paymentRequirements.network };
    return pick.settle(body.paymentPayload, body.paymentRequirements, opts);
  }

  #pick(body: FacilitatorRequest): X402Scheme | { reason: string; message: string } {
    if (body.x402Version !== 2 || body.paymentPayload.x402Version !== 2) return { reason: Reason.invalidVersion, message: 'this facilitator speaks x402 version 2' };
    const req = body.paymentRequirements;
    const ofScheme = this.schemes.filter((s) => s.scheme === req.scheme);
    if (ofScheme.length === 0) return { reason: Reason.unsupportedScheme, message: `scheme ${JSON.stringify(req.scheme)} is not supported` };
    const s = ofScheme.find((x) => x.networks().includes(req.network));
    return s ?? { reason: Reason.invalidNetwork, message: `network ${JSON.stringify(req.network)} is not supported` };
  }
}

export function createX402(db: Database, config: Config, clock: Clock, opts: ExactEvmOptions = {}): X402Facilitator {
  const exact = new ExactEvmScheme(db, config, clock, opts);
  const signer = config.settlement;
  return new X402Facilitator([exact], async () => {
    if (!signer) return;
    for (const c of exact.chains()) await sharedExecutor(db, c.chain, signer).reconcile();
    // Confirmed settlements to merchants' wallets: announced once (x402.settlement.confirmed).
    while ((await emitConfirmedEvents(db, config, clock)) === 100);
  });
}
