import { TollgateSettlementArtifact } from '@tollgate/contracts';
import { createPublicClient, http, type Hex, type PublicClient } from 'viem';
import type { Config } from '../config/schema.ts';
import { describeError } from '../chain/evm/rpc.ts';

/**
 * Is the configured `settlement_contract` of a chain the contract Tollgate ships, run by our
 * executor? Used at start-up (verifySettlementContracts: refuse to start on a mismatch),
 * by `tollgate settlement status` / the admin status route, and by `tollgate doctor`.
 *
 * Code comparison: the address's runtime code must equal the artifact's `deployedBytecode`
 * (packages/contracts, written by its compile script) byte for byte, except the ranges the
 * constructor fills with immutables (`immutableReferences`, masked). TollgateSettlement has no
 * immutables (owner and executor are storage: they can be rotated), so today the comparison is
 * exact. The trailing CBOR metadata (the hash of the sources and compiler settings) is compared
 * too, on purpose: a different hash means different sources or settings, i.e. not the audited
 * build; `tollgate settlement deploy` deploys exactly the artifact, so its deployments match.
 */

/** What the check needs from a chain: viem's public client has it. */
export type ContractReader = Pick<PublicClient, 'getChainId' | 'getCode' | 'readContract'>;

type SettlementProblem =
  /** the RPC did not answer (nothing is known about the contract) */
  | 'unreachable'
  /** the RPC serves another chain id */
  | 'wrong_chain'
  /** no code at the address (not deployed on this chain, or a typo) */
  | 'no_code'
  /** code differs from the shipped TollgateSettlement */
  | 'code_mismatch'
  /** the contract's executor is not the address of Tollgate's executor key */
  | 'executor_mismatch';

interface SettlementState {
  owner: Hex;
  /** the owner named by transferOwnership, until they accept (null: none) */
  pendingOwner: Hex | null;
  executor: Hex;
  paused: boolean;
}

export interface SettlementContractCheck {
  chainId: number;
  address: Hex;
  expectedExecutor: Hex;
  /** code and executor verified (a paused contract is still ok: see `warnings`) */
  ok: boolean;
  problem?: { code: SettlementProblem; message: string };
  /** read once the code matched (reads of another contract would mean nothing) */
  state?: SettlementState;
  /** not fatal: a paused contract settles nothing until unpaused */
  warnings: string[];
}

const ZERO = '0x0000000000000000000000000000000000000000';
const lower = (a: string) => a.toLowerCase() as Hex;

/**
 * Runtime code equality with the artifact, immutable ranges masked (see the module comment).
 *
 * @example
 * runtimeCodeMatches(await client.getCode({ address }), TollgateSettlementArtifact) // true for a deployment of it
 */
export function runtimeCodeMatches(onChain: Hex | undefined, artifact: { deployedBytecode: Hex; immutableReferences?: readonly { start: number; length: number }[] }): boolean {
  if (!onChain) return false;
  const a = onChain.toLowerCase().slice(2);
  const b = artifact.deployedBytecode.toLowerCase().slice(2);
  if (a.length !== b.length) return false;
  let from = 0;
  for (const r of artifact.immutableReferences ?? []) {
    if (a.slice(from, r.start * 2) !== b.slice(from, r.start * 2)) return false;
    from = (r.start + r.length) * 2;
  }
  return a.slice(from) === b.slice(from);
}

/**
 * Checks one chain's settlement contract. Never throws: an RPC fault is `problem.code
 * 'unreachable'`.
 *
 * @example
 * const r = await checkSettlementContract(publicClient, { chainId: 137, address, expectedExecutor: signer.executorAddress });
 * if (!r.ok) console.error(describeSettlementCheck(r));
 */
export async function checkSettlementContract(reader: ContractReader, opts: { chainId: number; address: Hex; expectedExecutor: Hex }): Promise<SettlementContractCheck> {
  const base = { chainId: opts.chainId, address: lower(opts.address), expectedExecutor: lower(opts.expectedExecutor), warnings: [] as string[] };
  const fail = (code: SettlementProblem, message: string): SettlementContractCheck => ({ ...base, ok: false, problem: { code, message } });
  try {
    const [servedChain, code] = await Promise.all([reader.getChainId(), reader.getCode({ address: opts.address })]);
    if (servedChain !== opts.chainId) return fail('wrong_chain', `the RPC serves chain ${servedChain}, not ${opts.chainId}`);
    if (!code || code === '0x') return fail('no_code', 'no contract code at this address (not deployed on this chain?)');
    if (!runtimeCodeMatches(code, TollgateSettlementArtifact)) {
      return fail('code_mismatch', `the code at this address is not the shipped TollgateSettlement (${(code.length - 2) / 2} bytes, expected ${(TollgateSettlementArtifact.deployedBytecode.length - 2) / 2})`);
    }
    const read = <T>(functionName: 'owner' | 'pendingOwner' | 'executor' | 'paused') => reader.readContract({ address: opts.address, abi: TollgateSettlementArtifact.abi, functionName }) as Promise<T>;
    const [owner, pendingOwner, executor, paused] = await Promise.all([read<Hex>('owner'), read<Hex>('pendingOwner'), read<Hex>('executor'), read<boolean>('paused')]);
    const state: SettlementState = { owner: lower(owner), pendingOwner: pendingOwner === ZERO ? null : lower(pendingOwner), executor: lower(executor), paused };
    if (state.executor !== base.expectedExecutor) {
      return { ...fail('executor_mismatch', `its executor is ${state.executor}, but the executor key's address is ${base.expectedExecutor} (tollgate settlement rotate-executor)`), state };
    }
    const warnings = paused ? ['the contract is paused: settlements and refunds wait until its owner unpauses it (tollgate settlement unpause)'] : [];
    return { ...base, ok: true, state, warnings };
  } catch (err) {
    return fail('unreachable', `could not read the chain: ${describeError(err)}`);
  }
}

/** One line naming the chain, the address and what is wrong (or the warnings). */
export function describeSettlementCheck(r: SettlementContractCheck): string {
  const what = r.problem ? r.problem.message : r.warnings.length > 0 ? r.warnings.join('; ') : 'ok';
  return `chain ${r.chainId}: settlement_contract ${r.address}: ${what}`;
}

/** Thrown at start-up when a configured settlement contract cannot be the one to use. */
export class SettlementContractError extends Error {
  readonly check: SettlementContractCheck;
  constructor(check: SettlementContractCheck) {
    super(describeSettlementCheck(check));
    this.check = check;
    this.name = 'SettlementContractError';
  }
}

/**
 * The start-up check of every chain with a `settlement_contract`: throws SettlementContractError
 * (one line) on the first contract with the wrong code or executor, or served by an RPC of another
 * chain. A paused contract is a warning. An RPC that does not answer is a warning too: the API and
 * the watcher ride out an outage, and refusing to start would turn a provider's bad minute into
 * downtime; settlements on that chain wait until it answers (and `tollgate settlement status` /
 * `tollgate doctor` show it).
 */
export async function verifySettlementContracts(config: Pick<Config, 'chains' | 'settlement'>, opts: { warn: (line: string) => void; readerFor?: (rpcUrl: string) => ContractReader }): Promise<SettlementContractCheck[]> {
  const signer = config.settlement;
  if (!signer) return [];
  const readerFor = opts.readerFor ?? ((url: string) => createPublicClient({ transport: http(url, { timeout: 10_000, retryCount: 1 }) }));
  const checks = await Promise.all(config.chains.filter((c) => c.settlementContract).map((c) => checkSettlementContract(readerFor(c.rpcUrl), { chainId: c.chainId, address: c.settlementContract!, expectedExecutor: signer.executorAddress })));
  const fatal = checks.find((r) => r.problem && r.problem.code !== 'unreachable');
  if (fatal) throw new SettlementContractError(fatal);
  for (const r of checks) if (r.problem || r.warnings.length > 0) opts.warn(`tollgate: warning: ${describeSettlementCheck(r)}`);
  return checks;
}
