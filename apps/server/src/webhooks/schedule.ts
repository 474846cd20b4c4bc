/**
 * The retry schedule of webhook deliveries (docs/webhooks.md): 10 s, 1 min, 5 min, 30 min, 2 h,
 * 6 h, 12 h, then every 24 h, each ±10 % jitter, until at least 3 days have passed; then the
 * delivery is dead. Pure: no clock, no randomness of its own (the caller passes `random`).
 *
 * Why 3 daily retries after the 7 fixed steps: the fixed steps add up to 74,170 s (20.6 h); with
 * three 24 h steps the nominal total is 333,370 s (3.86 days) and the shortest jittered total
 * (−10 % everywhere) is 300,033 s = 3.47 days ≥ 3 days. Two daily steps would give 2.1–2.9 days
 * nominal, short of the promise. 11 attempts in all: the first plus 10 retries.
 */
export const RETRY_DELAYS_SECONDS: readonly number[] = [10, 60, 300, 1800, 7200, 21600, 43200, 86400, 86400, 86400];

/** The first attempt plus one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** ±10 % around each nominal delay. */
export const JITTER = 0.1;

/**
 * Milliseconds to wait after failed attempt number `attempt` (1-based) before the next one, or
 * `undefined` when that was the last attempt (the delivery is dead).
 *
 * @param random a number in [0, 1): 0 gives −10 %, 0.5 the nominal delay, →1 gives +10 %.
 * @example
 * retryDelayMs(1, () => 0.5) // => 10_000  (the second attempt 10 s after the first)
 * retryDelayMs(11, Math.random) // => undefined (dead)
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  const nominal = RETRY_DELAYS_SECONDS[attempt - 1];
  if (nominal === undefined) return undefined;
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(nominal * 1000 * (1 - JITTER + 2 * JITTER * r));
}

/** How an HTTP outcome counts for a delivery: published practice (stripe-node, btcpay ShouldRetry). */
export type AttemptOutcome =
  | { kind: 'delivered' }
  /** 5xx, 408, 429, 3xx, timeouts and network errors: the receiver may succeed later. */
  | { kind: 'retry' }
  /** Any other 4xx: the receiver refused this delivery. Still retried (a receiver deploying a fix
   * for its verification code answers 400 until then), but recorded as refused. */
  | { kind: 'refused' };

/**
 * Classifies one attempt's HTTP status (`undefined` for a timeout or network error).
 *
 * @example classifyStatus(204) // => { kind: 'delivered' }
 * @example classifyStatus(404) // => { kind: 'refused' }
 */
export function classifyStatus(status: number | undefined): AttemptOutcome {
  if (status === undefined) return { kind: 'retry' };
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return { kind: 'refused' };
  return { kind: 'retry' };
}
