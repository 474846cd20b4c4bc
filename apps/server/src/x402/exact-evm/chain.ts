import { BaseError, CallExecutionError, createPublicClient, HttpRequestError, RawContractError, TimeoutError, encodeFunctionData, type Hex, type PublicClient } from 'viem';
import type { ChainConfig } from '../../config/schema.ts';
import { eip3009Abi } from './abi.ts';
import type { Authorization } from './authorization.ts';
import { splitSignature } from '../../chain/evm/signature.ts';
import { ChainUnavailable, onChain } from '../scheme.ts';
import { chainTransport } from '../../chain/evm/transport.ts';

export interface Eip712Domain {
  name: string;
  version: string;
}

/** On-chain facts about one authorization, read in parallel. */
export interface AuthorizationState {
  balance: bigint;
  used: boolean;
  /** The eth_call of transferWithAuthorization from the executor; undefined when not simulated. */
  simulation?: { ok: true } | { ok: false; message: string };
}

/**
 * Reads of one chain for the `exact` EVM scheme: token EIP-712 domains (cached: a token's name and
 * version do not change), balances, authorization states, and simulations.
 */
export class ExactEvmChain {
  readonly client: PublicClient;
  readonly #domains = new Map<Hex, Promise<Eip712Domain | undefined>>();
  readonly chain: ChainConfig;

  constructor(chain: ChainConfig) {
    this.chain = chain;
    this.client = createPublicClient({ transport: chainTransport(chain, { timeoutMs: 10_000 }) });
  }

  /** The token's EIP-712 domain name and version from `name()` and `version()`; undefined when it has none. */
  domainOf(token: Hex): Promise<Eip712Domain | undefined> {
    let d = this.#domains.get(token);
    if (!d) {
      d = Promise.all([this.client.readContract({ address: token, abi: eip3009Abi, functionName: 'name' }), this.client.readContract({ address: token, abi: eip3009Abi, functionName: 'version' })]).then(
        ([name, version]) => ({ name, version }),
        (err: unknown) => {
          // A token without name()/version() has no domain; a transport fault is not an answer.
          if (err instanceof BaseError && !err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) return undefined;
          throw new ChainUnavailable(err);
        },
      );
      // A failed read is not cached: the next request asks again.
      void d.then(
        (v) => v === undefined && this.#domains.delete(token),
        () => this.#domains.delete(token),
      );
      this.#domains.set(token, d);
    }
    return d;
  }

  async state(token: Hex, a: Authorization, simulateFrom: Hex | undefined): Promise<AuthorizationState> {
    const [balance, used, simulation] = await onChain(
      Promise.all([
        this.client.readContract({ address: token, abi: eip3009Abi, functionName: 'balanceOf', args: [a.from] }),
        this.client.readContract({ address: token, abi: eip3009Abi, functionName: 'authorizationState', args: [a.from, a.nonce] }),
        simulateFrom === undefined
          ? undefined
          : this.client.call({ account: simulateFrom, to: token, data: transferCalldata(a) }).then(
              () => ({ ok: true as const }),
              (err: unknown) => simulationFailure(err),
            ),
      ]),
    );
    return { balance, used, ...(simulation ? { simulation } : {}) };
  }
}

/** The token call that executes the authorization (v, r, s form, as USDC's FiatTokenV2 has it). */
export function transferArgs(a: Authorization) {
  // parseAuthorization admitted only signatures that split.
  const sig = splitSignature(a.signature)!;
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, sig.v, sig.r, sig.s] as const;
}

export function transferCalldata(a: Authorization): Hex {
  return encodeFunctionData({ abi: eip3009Abi, functionName: 'transferWithAuthorization', args: transferArgs(a) });
}

/** A reverted eth_call is a refusal; a transport fault is not (the chain could not be asked). */
function simulationFailure(err: unknown): { ok: false; message: string } {
  if (err instanceof BaseError && err.walk((e) => e instanceof CallExecutionError || e instanceof RawContractError) && !err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) {
    return { ok: false, message: err.shortMessage };
  }
  throw err;
}
