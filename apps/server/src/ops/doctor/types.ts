/** One line of `tollgate doctor`. `warn` is shown but does not fail the run; `skip` says why a check could not run. */
type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** what was checked, e.g. `chain 137 rpc https://polygon-rpc.com/…` (URLs redacted: redactUrl) */
  name: string;
  status: CheckStatus;
  detail: string;
  /** machine-readable facts for --json (numbers as strings when they are amounts) */
  data?: Record<string, unknown>;
}

export interface DoctorOptions {
  /** how long a chain's head may take to advance before it counts as stalled (ms) */
  headTimeoutMs: number;
  /** tolerated difference between this clock and the latest block's time (seconds) */
  maxClockSkewSeconds: number;
  /** minimum executor balance per EVM chain id, in wei; absent: 20 settlements at the current gas price */
  minBalanceWei: ReadonlyMap<number, bigint>;
  /** minimum Solana delegate balance in lamports */
  minSolLamports: bigint;
  /** bound of every single RPC or HTTP call (ms) */
  callTimeoutMs: number;
}

export const DEFAULT_DOCTOR_OPTIONS: DoctorOptions = {
  headTimeoutMs: 30_000,
  maxClockSkewSeconds: 60,
  minBalanceWei: new Map(),
  minSolLamports: 10_000_000n, // 0.01 SOL: ~2,000 pulls at 5,000 lamports per signature
  callTimeoutMs: 5_000,
};

/** Gas of one settlement, generously (an ERC-20 transfer plus a callback), for the default threshold. */
export const SETTLEMENT_GAS = 300_000n;
/** The default executor threshold covers this many settlements at the current gas price. */
export const DEFAULT_BALANCE_SETTLEMENTS = 20n;

/**
 * An RPC URL as it may be printed: providers put API keys in the path or query
 * (`https://polygon-mainnet.g.alchemy.com/v2/<key>`), so only the scheme, host and port are shown.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' && !u.search ? '' : '/…'}`;
  } catch {
    return '(invalid URL)';
  }
}

/** An error's message with `url` (and its path, which may hold a key) replaced by its redacted form. */
export function scrub(message: string, url: string): string {
  let out = message.split(url).join(redactUrl(url));
  try {
    const u = new URL(url);
    if (u.pathname.length > 1) out = out.split(u.pathname).join('/…');
    if (u.search) out = out.split(u.search).join('');
  } catch {
    /* not a URL: nothing more to hide */
  }
  return out.replace(/\s+/g, ' ').slice(0, 300);
}

/** Resolves with `p`, or rejects after `ms` with "timed out after N ms". */
export function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]);
}
