import { erc20Abi, type Hex } from 'viem';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { checkSettlementContract, type SettlementContractCheck } from './contract-check.ts';
import { unfinishedSettlements, type SettlementRecord } from './attempts.ts';
import { sharedExecutor } from './executors.ts';
import { feeBumpConfig } from './fee-bump.ts';

/**
 * A chain's DELEGATE settlement as the operator needs to see it (GET
 * /admin/v1/chains/{id}/settlement, `tollgate settlement status|pending`): the contract check,
 * what the pool holds per token, the executor's gas balance and nonces, and every executor
 * transaction still waiting, with why.
 */
interface PendingView {
  order_id: string;
  kind: string;
  attempt: number;
  nonce: number;
  tx_hash: string;
  status: 'pending' | 'sent';
  age_seconds: number;
  /** why it is not final yet, in words */
  reason: string;
}

interface SettlementStatusView {
  chain_id: number;
  /** null: no settlement_contract on this chain (the executor may still relay x402 payments there) */
  contract: null | {
    address: string;
    ok: boolean;
    problem: { code: string; message: string } | null;
    owner: string | null;
    pending_owner: string | null;
    executor: string | null;
    paused: boolean | null;
    warnings: string[];
  };
  executor: { address: string; native_balance_wei: string | null; nonce_latest: number | null; nonce_pending: number | null };
  /** what the contract holds per configured token (payers' funds waiting for settlement or refund) */
  balances: { symbol: string; token: string; amount_wei: string | null }[];
  pending: PendingView[];
}

export type StatusOutcome = { kind: 'status'; view: SettlementStatusView } | { kind: 'chain_not_supported' } | { kind: 'delegate_not_enabled' };

/** Why an unfinished executor transaction waits, from its row and the chain's nonces. */
function pendingReason(r: SettlementRecord, nonces: { latest: number; pending: number } | undefined, feeBumpAfterMs: number | undefined): string {
  if (r.status === 'pending') return 'recorded, not broadcast yet (sent on the next worker tick)';
  if (nonces && r.nonce > nonces.latest) {
    if (r.nonce >= nonces.pending) return `not in the node's pool: waits for nonce ${r.nonce} while the chain's next is ${nonces.pending} (re-sent on the next tick)`;
    const bump = r.attempt > 0 ? ` (fee-bumped ${r.attempt}×)` : feeBumpAfterMs !== undefined ? ` (fees are raised after ${Math.round(feeBumpAfterMs / 1000)} s unmined)` : '';
    return `broadcast, not mined yet${bump}`;
  }
  return 'mined, waiting for finality_confirmations';
}

export async function settlementStatus(deps: { config: Config; db: Database }, chainId: number): Promise<StatusOutcome> {
  const chain = deps.config.chains.find((c) => c.chainId === chainId);
  if (!chain) return { kind: 'chain_not_supported' };
  const signer = deps.config.settlement;
  if (!signer) return { kind: 'delegate_not_enabled' };
  const ex = sharedExecutor(deps.db, chain, signer);
  const client = ex.client;
  const contract = chain.settlementContract;
  const executor = signer.executorAddress.toLowerCase() as Hex;
  const orNull = <T>(p: Promise<T>): Promise<T | null> => p.catch(() => null);
  const [check, gas, latest, pending, balances, rows] = await Promise.all([
    contract ? checkSettlementContract(client, { chainId, address: contract, expectedExecutor: executor }) : undefined,
    orNull(client.getBalance({ address: executor })),
    orNull(client.getTransactionCount({ address: executor, blockTag: 'latest' })),
    orNull(client.getTransactionCount({ address: executor, blockTag: 'pending' })),
    Promise.all(contract ? chain.tokens.map(async (t) => ({ symbol: t.symbol, token: t.address, amount_wei: (await orNull(client.readContract({ address: t.address, abi: erc20Abi, functionName: 'balanceOf', args: [contract] })))?.toString() ?? null })) : []),
    unfinishedSettlements(deps.db, chainId, 100),
  ]);
  const nonces = latest !== null && pending !== null ? { latest, pending } : undefined;
  // One line per settlement: its latest unfinished attempt (the one a node may still mine).
  const latestAttempt = new Map<string, SettlementRecord>();
  for (const r of rows) {
    const key = `${r.kind}\u0000${r.orderId}`;
    const cur = latestAttempt.get(key);
    if (!cur || r.attempt > cur.attempt) latestAttempt.set(key, r);
  }
  const bumpAfter = feeBumpConfig(chain.feeBump).afterMs;
  return {
    kind: 'status',
    view: {
      chain_id: chainId,
      contract: check ? contractView(check) : null,
      executor: { address: executor, native_balance_wei: gas?.toString() ?? null, nonce_latest: latest, nonce_pending: pending },
      balances,
      pending: [...latestAttempt.values()]
        .sort((a, b) => a.nonce - b.nonce)
        .map((r) => ({
          order_id: r.orderId,
          kind: r.kind,
          attempt: r.attempt,
          nonce: r.nonce,
          tx_hash: r.txHash,
          status: r.status as 'pending' | 'sent',
          age_seconds: Math.floor((r.ageMs ?? 0) / 1000),
          reason: pendingReason(r, nonces, bumpAfter),
        })),
    },
  };
}

function contractView(c: SettlementContractCheck): SettlementStatusView['contract'] {
  return {
    address: c.address,
    ok: c.ok,
    problem: c.problem ?? null,
    owner: c.state?.owner ?? null,
    pending_owner: c.state?.pendingOwner ?? null,
    executor: c.state?.executor ?? null,
    paused: c.state?.paused ?? null,
    warnings: c.warnings,
  };
}
