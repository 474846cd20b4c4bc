import { createPublicClient, formatEther, http, type Block, type Hex, type PublicClient } from 'viem';
import { describeError } from '../../chain/evm/rpc.ts';
import type { ChainConfig } from '../../config/schema.ts';
import { checkSettlementContract, describeSettlementCheck } from '../../settlement/contract-check.ts';
import { DEFAULT_BALANCE_SETTLEMENTS, redactUrl, scrub, SETTLEMENT_GAS, within, type CheckResult, type DoctorOptions } from './types.ts';

/** A chain as configured; `rpcUrls` (several, in order of preference) when the deployment lists more than one. */
type Chain = ChainConfig & { rpcUrls?: readonly string[] };

interface Reached {
  url: string;
  client: PublicClient;
  /** the block seen when the head advanced (or the last one seen when it did not) */
  block: Block;
  advanced: boolean;
}

/**
 * Every check of one EVM chain: each RPC URL (reachable, right chain id, head advancing), the
 * clock against the latest block, the settlement contract and the executor's balance (through the
 * first URL that passed).
 */
export async function checkEvmChain(chain: Chain, executor: Hex | undefined, opts: DoctorOptions, now: () => number): Promise<CheckResult[]> {
  const urls = chain.rpcUrls && chain.rpcUrls.length > 0 ? [...chain.rpcUrls] : [chain.rpcUrl];
  const probes = await Promise.all(urls.map((url) => probeRpc(chain.chainId, url, opts)));
  const out = probes.map((p) => p.result);
  const good = probes.find((p) => p.reached && p.result.status === 'ok')?.reached ?? probes.find((p) => p.reached)?.reached;
  const tag = `chain ${chain.chainId}`;
  if (!good) {
    out.push({ name: `${tag} clock`, status: 'skip', detail: 'no RPC URL of this chain answered' });
    if (chain.settlementContract) out.push({ name: `${tag} settlement`, status: 'skip', detail: 'no RPC URL of this chain answered' });
    if (executor) out.push({ name: `${tag} executor balance`, status: 'skip', detail: 'no RPC URL of this chain answered' });
    return out;
  }
  out.push(clockSkew(tag, good.block, now(), opts.maxClockSkewSeconds));
  if (chain.settlementContract && executor) {
    const r = await checkSettlementContract(good.client, { chainId: chain.chainId, address: chain.settlementContract, expectedExecutor: executor });
    const line = scrub(describeSettlementCheck(r), good.url);
    // A paused contract is not a configuration error (start-up only warns), but nothing settles
    // through it: for monitoring, DELEGATE on this chain is down.
    out.push(
      r.ok && r.state && !r.state.paused
        ? { name: `${tag} settlement`, status: 'ok', detail: `${r.address}: shipped code, executor ${r.state.executor}, not paused`, data: { ...r.state } }
        : { name: `${tag} settlement`, status: 'fail', detail: line, data: { problem: r.problem?.code ?? (r.state?.paused ? 'paused' : 'unknown'), ...(r.state ? { ...r.state } : {}) } },
    );
  }
  if (executor) out.push(await executorBalance(tag, chain.chainId, good, executor, opts));
  return out;
}

async function probeRpc(chainId: number, url: string, opts: DoctorOptions): Promise<{ result: CheckResult; reached?: Reached }> {
  const name = `chain ${chainId} rpc ${redactUrl(url)}`;
  const client = createPublicClient({ transport: http(url, { timeout: opts.callTimeoutMs, retryCount: 0 }) });
  const t = opts.callTimeoutMs;
  let block: Block;
  try {
    const served = await within(client.getChainId(), t);
    if (served !== chainId) return { result: { name, status: 'fail', detail: `serves chain ${served}, not ${chainId}: wrong URL or wrong chain_id`, data: { served_chain_id: served } } };
    block = await within(client.getBlock({ blockTag: 'latest' }), t);
  } catch (err) {
    return { result: { name, status: 'fail', detail: `unreachable: ${scrub(describeError(err), url)}` } };
  }
  // The head must move within headTimeoutMs: a node that answers but stopped following the chain
  // (stuck sync, a halted devnet) looks healthy to every other call.
  const start = Date.now();
  const first = block.number!;
  try {
    while (Date.now() - start < opts.headTimeoutMs) {
      await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(100, opts.headTimeoutMs / 10))));
      const n = await within(client.getBlockNumber({ cacheTime: 0 }), t);
      if (n > first) {
        block = await within(client.getBlock({ blockTag: 'latest' }), t);
        const secs = ((Date.now() - start) / 1000).toFixed(1);
        return {
          result: { name, status: 'ok', detail: `chain ${chainId}, head ${block.number} advancing (+${block.number! - first} in ${secs} s)`, data: { head: Number(block.number) } },
          reached: { url, client, block, advanced: true },
        };
      }
    }
  } catch (err) {
    return { result: { name, status: 'fail', detail: `stopped answering: ${scrub(describeError(err), url)}` } };
  }
  return {
    result: { name, status: 'fail', detail: `head stuck at block ${first} for ${(opts.headTimeoutMs / 1000).toFixed(0)} s: the node is not following the chain`, data: { head: Number(first) } },
    reached: { url, client, block, advanced: false },
  };
}

/**
 * This clock against the chain's: order expiry, signed-request windows and confirmations all
 * compare the two. A fresh block's time is the chain's "now" to within its block interval.
 */
function clockSkew(tag: string, block: Block, nowMs: number, maxSeconds: number): CheckResult {
  const skew = Math.round(nowMs / 1000 - Number(block.timestamp));
  const data = { block: Number(block.number), block_time: Number(block.timestamp), skew_seconds: skew };
  if (skew < -maxSeconds) return { name: `${tag} clock`, status: 'fail', detail: `this clock is ${-skew} s behind the latest block's time (more than ${maxSeconds} s): fix NTP`, data };
  if (skew > maxSeconds) {
    return { name: `${tag} clock`, status: 'fail', detail: `the latest block is ${skew} s older than this clock (more than ${maxSeconds} s): this clock is ahead, or the node or chain is behind`, data };
  }
  return { name: `${tag} clock`, status: 'ok', detail: `within ${Math.abs(skew)} s of the latest block's time`, data };
}

async function executorBalance(tag: string, chainId: number, r: Reached, executor: Hex, opts: DoctorOptions): Promise<CheckResult> {
  const name = `${tag} executor balance`;
  try {
    const [balance, gasPrice] = await Promise.all([within(r.client.getBalance({ address: executor }), opts.callTimeoutMs), within(r.client.getGasPrice(), opts.callTimeoutMs)]);
    const perSettlement = gasPrice * SETTLEMENT_GAS;
    const configured = opts.minBalanceWei.get(chainId);
    const min = configured ?? perSettlement * DEFAULT_BALANCE_SETTLEMENTS;
    const covers = perSettlement > 0n ? balance / perSettlement : undefined;
    const data = { executor, balance_wei: balance.toString(), min_wei: min.toString(), gas_price_wei: gasPrice.toString() };
    const what = `${executor} holds ${formatEther(balance)} (native units)${covers !== undefined ? `, ~${covers} settlements at the current gas price` : ''}`;
    const limit = configured !== undefined ? `the minimum ${formatEther(min)}` : `${formatEther(min)}, ${DEFAULT_BALANCE_SETTLEMENTS} settlements' gas (--min-balance ${chainId}=AMOUNT sets it)`;
    return balance >= min ? { name, status: 'ok', detail: `${what}; minimum ${formatEther(min)}`, data } : { name, status: 'fail', detail: `${what}: below ${limit}. Fund it before DELEGATE and x402 settlements fail`, data };
  } catch (err) {
    return { name, status: 'fail', detail: `could not read: ${scrub(describeError(err), r.url)}` };
  }
}
