import { DEFAULT_FEE_BUMP, type FeeBumpConfig } from '../config/schema.ts';

/**
 * Fee bumping of the executor's stuck transactions: the fee arithmetic and the event port of the
 * metrics. The replacement itself (same nonce, recorded before it is sent) is the executor's
 * (settlement/executor.ts `#bump`).
 */

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What a replacement offers, or why it cannot be sent. */
export type BumpPlan = { kind: 'bump'; fees: Fees } | { kind: 'capped'; wanted: Fees; cap: bigint };

/** `v` raised by `percent`, rounded up (a node compares the replacement's fees with ≥ +10 %). */
function raised(v: bigint, percent: number): bigint {
  return (v * BigInt(100 + percent) + 99n) / 100n;
}

/**
 * The fees of a replacement of a transaction that offered `old`: both caps raised by at least
 * `bumpPercent`, and at least what the node estimates now (the base fee may have risen past the old
 * cap, so +15 % alone would still be stuck). Never above `maxFeePerGas`; when even the minimum raise
 * is above it, nothing is sent (`capped`): the old transaction stays the one that may be mined.
 */
export function bumpFees(old: Fees, now: Fees, cfg: FeeBumpConfig): BumpPlan {
  const minMax = raised(old.maxFeePerGas, cfg.bumpPercent);
  const minTip = raised(old.maxPriorityFeePerGas, cfg.bumpPercent);
  const tip = minTip > now.maxPriorityFeePerGas ? minTip : now.maxPriorityFeePerGas;
  let max = minMax > now.maxFeePerGas ? minMax : now.maxFeePerGas;
  if (tip > max) max = tip;
  if (minMax > cfg.maxFeePerGas || minTip > cfg.maxFeePerGas) return { kind: 'capped', wanted: { maxFeePerGas: max, maxPriorityFeePerGas: tip }, cap: cfg.maxFeePerGas };
  if (max > cfg.maxFeePerGas) max = cfg.maxFeePerGas;
  return { kind: 'bump', fees: { maxFeePerGas: max, maxPriorityFeePerGas: tip < max ? tip : max } };
}

export function feeBumpConfig(c: FeeBumpConfig | undefined): FeeBumpConfig {
  return c ?? DEFAULT_FEE_BUMP;
}

/** One replacement decision of an executor, as the metrics see it (no key, no raw transaction). */
export interface FeeBumpEvent {
  chainId: number;
  kind: string;
  outcome: 'bumped' | 'capped';
}

const observers = new Set<(e: FeeBumpEvent) => void>();

/** Subscribes to every executor's replacement decisions in this process (main.ts → /metrics). */
export function observeFeeBumps(fn: (e: FeeBumpEvent) => void): () => void {
  observers.add(fn);
  return () => void observers.delete(fn);
}

export function reportFeeBump(e: FeeBumpEvent): void {
  for (const fn of observers) fn(e);
}
