import { deploySettlement, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner, type ChainConfig } from '../../src/config/schema.ts';

export interface DelegateSetup {
  /** `chain` with `settlementContract` set (deployed here when it was absent). */
  chain: ChainConfig;
  /** The executor key as config.settlement holds it. */
  signer: SettlementSigner;
  /** The example callback adapter, when this call deployed the contracts. */
  adapter?: { address: Hex; eip712Name: string; eip712Version: string };
}

/**
 * DELEGATE set-up of a test chain, as the test environment does it: when `chain` has no
 * settlement contract, deploys TollgateSettlement (and the example adapter accepting the chain's
 * tokens) from anvil account 0 with `executorKey` (default anvil account 9, public) as executor.
 *
 * @example
 * const { chain, signer } = await withSettlement(dev, chainConfig);
 * new SettlementExecutor({ db, chain, signer });
 */
export async function withSettlement(dev: DevChain, chain: ChainConfig, executorKey: Hex = dev.payers[8]!.privateKey): Promise<DelegateSetup> {
  const signer = new SettlementSigner(executorKey, privateKeyToAccount(executorKey).address);
  if (chain.settlementContract) return { chain, signer };
  const dep = await deploySettlement({
    rpcUrl: chain.rpcUrl,
    chainId: chain.chainId,
    deployerKey: dev.deployer.privateKey,
    executor: signer.executorAddress,
    adapterTokens: chain.tokens.map((t) => t.address),
  });
  return {
    chain: { ...chain, settlementContract: dep.settlement.toLowerCase() as Hex },
    signer,
    ...(dep.adapter ? { adapter: { ...dep.adapter, address: dep.adapter.address.toLowerCase() as Hex } } : {}),
  };
}

/**
 * `reconcile()` again until none of the rows it touched is pending or sent (or `timeoutMs`
 * passes), as the worker's ticks do: anvil mines a broadcast transaction a moment after the
 * broadcast returns, so one call right after a broadcast may still see no receipt under load.
 * Returns every row touched, in the order first seen, as last seen.
 */
export async function reconcileSettled<R extends { id: number | string; status: string }>(ex: { reconcile(): Promise<R[]> }, timeoutMs = 20_000): Promise<R[]> {
  const until = Date.now() + timeoutMs;
  const seen = new Map<R['id'], R>();
  for (;;) {
    const rows = await ex.reconcile();
    for (const r of rows) seen.set(r.id, r);
    if (![...seen.values()].some((r) => r.status === 'pending' || r.status === 'sent') || Date.now() > until) return [...seen.values()];
    await new Promise((ok) => setTimeout(ok, 100));
  }
}
