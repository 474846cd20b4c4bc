import { ExampleCreditAdapterArtifact, TestCallbackAdapterArtifact, TestTetherTokenArtifact, TestTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { BaseError, ContractFunctionRevertedError, decodeErrorResult, toFunctionSelector, type Abi, type Hex } from 'viem';

type AbiError = Extract<Abi[number], { type: 'error' }>;

/**
 * Why a simulated executor call reverted, in words an operator and a merchant can act on. The
 * settlement contract wraps an adapter's revert in `CallbackReverted(adapter, reason)`; the
 * adapter's own custom error inside `reason` is what docs/delegate-adapters.md promises reaches the
 * order's `failure_reason`. It is decoded with the adapter's ABI when the caller knows it, else by
 * its 4-byte selector against the errors of every contract Tollgate ships (the example adapter is
 * the usual starting point, so its errors are the likely ones), else shown as the raw selector.
 */

/** Every custom error of the shipped contracts, one per selector (the first one wins). */
const KNOWN_ERRORS: Abi = (() => {
  const seen = new Set<string>();
  const out: AbiError[] = [];
  for (const a of [TollgateSettlementArtifact, ExampleCreditAdapterArtifact, TestTokenArtifact, TestTetherTokenArtifact, TestCallbackAdapterArtifact]) {
    for (const item of a.abi as Abi) {
      if (item.type !== 'error') continue;
      const sel = toFunctionSelector(`${item.name}(${item.inputs.map((i) => i.type).join(',')})`);
      if (!seen.has(sel)) seen.add(sel), out.push(item);
    }
  }
  return out;
})();

const MAX_ARG_CHARS = 200;

function formatArg(v: unknown): string {
  const s = typeof v === 'bigint' ? v.toString() : typeof v === 'string' ? (v.startsWith('0x') ? v : JSON.stringify(v)) : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  return s.length > MAX_ARG_CHARS ? `${s.slice(0, MAX_ARG_CHARS)}…` : s;
}

/**
 * Revert data → `Name(type value, …)`.
 *
 * @example
 * describeRevertData('0x…')            // 'InvalidAccount()' (the example adapter's error)
 * describeRevertData('0x08c379a0…')    // 'Error(string "sold out")'
 * describeRevertData('0xdeadbeef')     // 'error 0xdeadbeef (unknown selector, 4 bytes)'
 */
export function describeRevertData(data: Hex, abi?: Abi): string {
  if (data.length < 10) return data === '0x' ? 'no reason (empty revert data)' : `malformed revert data ${data}`;
  for (const candidate of [abi, KNOWN_ERRORS]) {
    if (!candidate) continue;
    try {
      const r = decodeErrorResult({ abi: candidate, data });
      const inputs = r.abiItem.type === 'error' ? r.abiItem.inputs : [];
      const args = (r.args ?? []) as readonly unknown[];
      return `${r.errorName}(${inputs.map((inp, i) => `${inp.type} ${formatArg(args[i])}`).join(', ')})`;
    } catch {
      // not in this ABI: try the next one
    }
  }
  return `error ${data.slice(0, 10)} (unknown selector, ${(data.length - 2) / 2} bytes)`;
}

/**
 * The custom error of a simulated revert: `error` is its name (what callers branch on, e.g.
 * `CallbackReverted`), `detail` the decoded description with arguments; for `CallbackReverted`, the
 * adapter's own error inside it. Undefined when `err` is not a revert (an RPC fault).
 */
export function refusalOf(err: unknown, adapterAbi?: Abi): { error: string; detail?: string } | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined;
  const name = reverted.data?.errorName ?? reverted.reason ?? 'reverted';
  const args = (reverted.data?.args ?? []) as readonly unknown[];
  if (name === 'CallbackReverted' && typeof args[1] === 'string') {
    return { error: name, detail: `CallbackReverted: adapter ${String(args[0]).toLowerCase()} reverted with ${describeRevertData(args[1] as Hex, adapterAbi)}` };
  }
  if (reverted.raw && reverted.raw.length >= 10) return { error: name, detail: describeRevertData(reverted.raw) };
  return { error: name };
}
