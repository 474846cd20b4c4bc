import { BaseError, createTransport, http, HttpRequestError, RpcError, RpcRequestError, TimeoutError, type EIP1193RequestFn, type HttpTransportConfig, type Transport } from 'viem';
import type { ChainConfig } from '../../config/schema.ts';
import { createLogger } from '../../log.ts';

/** What the pool logs through (chain/evm/context.ts's ChainLogger satisfies it). */
export interface RpcLog {
  info(msg: string, fields?: Record<string, string | number | undefined>): void;
  warn(msg: string, fields?: Record<string, string | number | undefined>): void;
  error(msg: string, fields?: Record<string, string | number | undefined>): void;
}

/** Warnings and errors on stderr in the one log-line format (log.ts). */
const stderrLog = (base: Record<string, number>): RpcLog => {
  const log = createLogger('warn', base);
  return { info: (m, f) => log.info(f ?? {}, m), warn: (m, f) => log.warn(f ?? {}, m), error: (m, f) => log.error(f ?? {}, m) };
};

/**
 * The RPC policy of an EVM chain, in one place: every viem client of Tollgate (the watcher's
 * `rpc.ts`, the executor, machine-payment verify, the x402 facilitator) talks to a chain through
 * `chainTransport`, so they share one view of each provider:
 *
 * - **Several URLs, in order of preference.** A request goes to the first usable URL; a URL that
 *   fails (connection error, timeout, HTTP 5xx or 4xx) rests for a backoff that doubles per
 *   consecutive failure (1 s … 60 s) and the request moves to the next URL at once.
 * - **Health checks.** Before a URL serves its first request, after a rest, and every
 *   `recheckMs` (default 60 s) it answers `eth_chainId`; only then does it take traffic again. A
 *   probe rides on real traffic (no idle polling): a chain nobody asks costs nothing.
 * - **Chain id.** A URL answering another chain id is refused (never used, one error line naming
 *   its origin and the id it serves) and probed again after `recheckMs`.
 * - **Rate limits.** HTTP 429, or a JSON-RPC rate-limit error (Infura's -32005 "request rate
 *   exceeded", Alchemy's 429 body, "too many requests"), rests the URL for its `Retry-After`
 *   (seconds or an HTTP date; a backoff when absent) and no request reaches it before then. When
 *   every URL rests, a request waits for the first to come back if that is within `maxWaitMs`
 *   (default 2 s); otherwise it fails at once with the rate-limit error, and the caller's own
 *   backoff (the watcher's tick, the executor's reconcile, a 503 to the client) takes over.
 * - **What is not the provider's fault passes through unchanged**: reverts, "range too large"
 *   answers (the watcher shrinks its range, rpc.ts), "nonce too low": any JSON-RPC error the node
 *   meant. They are answers, and another URL would give the same one.
 *
 * The state is kept per chain id + URL list in this process, so every client of a chain learns at
 * once that a provider is down or rate limited.
 */

export interface RpcPolicyOptions {
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
  /** JSON-RPC batching of the underlying HTTP transport (machine-payment lookups use it). */
  batch?: HttpTransportConfig['batch'];
  /** Longest wait for a resting URL inside one request (default 2,000 ms). */
  maxWaitMs?: number;
  /** How often a healthy URL proves its chain id again (default 60,000 ms). */
  recheckMs?: number;
  /** Where failover and refusals are reported (default: warn level on stderr). */
  log?: RpcLog;
}

/** No URL of a chain could serve a request; `cause` is the last URL's error. */
export class RpcUnavailableError extends BaseError {
  readonly reason: 'rate-limited' | 'down' | 'wrong-chain';
  // A viem BaseError, so viem's request layer passes it through as it is (anything else becomes UnknownRpcError).
  constructor(message: string, reason: 'rate-limited' | 'down' | 'wrong-chain') {
    super(message, { name: 'RpcUnavailableError' });
    this.reason = reason;
  }
}

interface Endpoint {
  label: string;
  request: EIP1193RequestFn;
  /** Time (ms) before which the URL takes no traffic (hard: rate limit, wrong chain) or only as a last resort (soft: failures). */
  restUntil: number;
  hardRest: boolean;
  failures: number;
  /** Until when the URL's last 429 asked us to wait (its Retry-After); 0 = none. */
  retryAfterUntil: number;
  /** Time the chain id was last proven, 0 = must probe before use. */
  verifiedAt: number;
  probing?: Promise<void>;
  wrongChain?: number;
}

const pools = new Map<string, RpcPool>();

/**
 * A viem transport over the chain's `rpcUrls` (or `rpcUrl`) with the policy above.
 *
 * @example
 * const client = createPublicClient({ transport: chainTransport(chain) });
 */
export function chainTransport(chain: Pick<ChainConfig, 'chainId' | 'rpcUrl' | 'rpcUrls'>, opts: RpcPolicyOptions = {}): Transport {
  const pool = rpcPool(chain, opts);
  const timeout = opts.timeoutMs ?? 10_000;
  // One underlying HTTP transport per URL and per client: batching and timeouts are per client.
  const requests = pool.urls.map((u, i) => http(u, { timeout, retryCount: 0, onFetchResponse: pool.onResponse(i), ...(opts.batch ? { batch: opts.batch } : {}) })({ retryCount: 0, timeout }).request);
  return () =>
    createTransport({
      key: 'tollgate',
      name: 'Tollgate RPC policy',
      type: 'tollgate',
      retryCount: 0,
      timeout,
      // The pool returns what the node answered; viem's typed request narrows it, as for its own http().
      request: ((args: Parameters<EIP1193RequestFn>[0]) => pool.request(args, requests)) as EIP1193RequestFn,
    });
}

/** The shared state of one chain's URLs (exported for tests and health reporting). */
export function rpcPool(chain: Pick<ChainConfig, 'chainId' | 'rpcUrl' | 'rpcUrls'>, opts: RpcPolicyOptions = {}): RpcPool {
  const urls = chain.rpcUrls && chain.rpcUrls.length > 0 ? chain.rpcUrls : [chain.rpcUrl];
  const key = `${chain.chainId}\n${urls.join('\n')}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new RpcPool(chain.chainId, urls, opts)));
  return pool;
}

export class RpcPool {
  readonly #endpoints: Endpoint[];
  readonly #maxWaitMs: number;
  readonly #recheckMs: number;
  readonly #log: RpcLog;
  readonly chainId: number;
  readonly urls: readonly string[];

  constructor(chainId: number, urls: readonly string[], opts: RpcPolicyOptions = {}) {
    this.chainId = chainId;
    this.urls = urls;
    this.#maxWaitMs = opts.maxWaitMs ?? 2_000;
    this.#recheckMs = opts.recheckMs ?? 60_000;
    this.#log = opts.log ?? stderrLog({ chain_id: chainId });
    const probeTimeout = opts.timeoutMs ?? 10_000;
    this.#endpoints = urls.map((u, i) => ({
      label: endpointLabel(u, i),
      request: http(u, { timeout: probeTimeout, retryCount: 0, onFetchResponse: this.onResponse(i) })({ retryCount: 0, timeout: probeTimeout }).request,
      restUntil: 0,
      hardRest: false,
      retryAfterUntil: 0,
      failures: 0,
      verifiedAt: 0,
    }));
  }

  /**
   * The fetch hook of URL `i`: a 429 whose body is a JSON-RPC error reaches us as an RpcRequestError
   * without headers (viem keeps only the body), so its Retry-After is taken here.
   */
  onResponse(i: number): (res: Response) => void {
    return (res) => {
      if (res.status !== 429) return;
      const ms = parseRetryAfter(res.headers.get('retry-after') ?? undefined);
      const e = this.#endpoints[i];
      if (e && ms !== undefined) e.retryAfterUntil = Math.max(e.retryAfterUntil, Date.now() + ms);
    };
  }

  /** Per URL (labelled by origin only: API keys live in paths): usable now, resting, or on another chain. */
  health(now = Date.now()): { url: string; state: 'ok' | 'resting' | 'wrong-chain' | 'unverified'; failures: number }[] {
    return this.#endpoints.map((e) => ({
      url: e.label,
      state: e.wrongChain !== undefined ? 'wrong-chain' : e.restUntil > now ? 'resting' : e.verifiedAt === 0 ? 'unverified' : 'ok',
      failures: e.failures,
    }));
  }

  /** Proves every URL's chain id now; the answer per URL (used at start-up). */
  async probeAll(): Promise<{ url: string; ok: boolean; chainId?: number; error?: string }[]> {
    return Promise.all(
      this.#endpoints.map(async (e) => {
        try {
          await this.#probe(e, Date.now(), true);
          return e.wrongChain !== undefined ? { url: e.label, ok: false, chainId: e.wrongChain } : { url: e.label, ok: true, chainId: this.chainId };
        } catch (err) {
          return { url: e.label, ok: false, error: shortError(err) };
        }
      }),
    );
  }

  async request(args: Parameters<EIP1193RequestFn>[0], requests: readonly EIP1193RequestFn[]): Promise<unknown> {
    let last: { err: unknown; reason: RpcUnavailableError['reason'] } | undefined;
    // A URL that failed in this request is not asked again by it (the caller owns retries); one
    // that rate-limited it may be, once its Retry-After has passed within `maxWaitMs`.
    const tried = new Set<Endpoint>();
    for (let round = 0; round < 3 * this.#endpoints.length + 2; round++) {
      const now = Date.now();
      const open = this.#endpoints.filter((e) => !tried.has(e));
      // Preference order among the rested; then a URL resting after failures (its rest orders the
      // URLs, it does not block: with nothing better, asking it is the only way to get an answer);
      // never one resting on a rate limit or on another chain id.
      const e = open.find((x) => x.restUntil <= now) ?? open.filter((x) => !x.hardRest).sort((a, b) => a.restUntil - b.restUntil)[0];
      if (!e) {
        if (open.length === 0) break;
        const soonest = Math.min(...open.map((x) => x.restUntil));
        if (soonest - now > this.#maxWaitMs) break;
        await sleep(soonest - now);
        continue;
      }
      const i = this.#endpoints.indexOf(e);
      try {
        if (e.verifiedAt === 0 || now - e.verifiedAt > this.#recheckMs) await this.#probe(e, now);
        if (e.wrongChain !== undefined) {
          tried.add(e);
          last = { err: new Error(`${e.label} serves chain ${e.wrongChain}`), reason: 'wrong-chain' };
          continue;
        }
        const result = await requests[i]!(args);
        // An answer to a request sent before a concurrent one was rate-limited does not lift that
        // Retry-After: only a URL not resting on a rate limit is marked healthy again.
        if (!e.hardRest || e.restUntil <= Date.now()) {
          if (e.failures > 0) this.#log.info('RPC URL answers again', { url: e.label });
          e.failures = 0;
          e.restUntil = 0;
          e.hardRest = false;
        }
        return result;
      } catch (err) {
        let verdict = classify(err);
        // A body viem could not read, sent with a 429 this URL just answered (e.g. to a batch): a rate limit.
        if (verdict.kind === 'down' && e.retryAfterUntil > Date.now()) verdict = { kind: 'rate-limited' };
        if (verdict.kind === 'answer') throw err;
        if (verdict.kind === 'down') tried.add(e);
        last = { err, reason: verdict.kind === 'rate-limited' ? 'rate-limited' : 'down' };
        this.#rest(e, verdict, err);
      }
    }
    if (!last) {
      const resting = this.#endpoints.some((e) => e.wrongChain === undefined);
      throw new RpcUnavailableError(`chain ${this.chainId}: ${resting ? 'every RPC URL is rate limited' : 'no RPC URL serves this chain id'}`, resting ? 'rate-limited' : 'wrong-chain');
    }
    if (last.reason === 'wrong-chain') {
      throw new RpcUnavailableError(`chain ${this.chainId}: no RPC URL serves this chain id (${last.err instanceof Error ? last.err.message : ''})`, 'wrong-chain');
    }
    // The last URL's own error is rethrown unchanged: callers classify it (timeouts, HTTP errors).
    throw last.err;
  }

  /** `quiet`: the caller reports the outcome itself (the start-up check). */
  async #probe(e: Endpoint, now: number, quiet = false): Promise<void> {
    e.probing ??= (async () => {
      try {
        const id = Number(BigInt((await e.request({ method: 'eth_chainId' })) as string));
        e.verifiedAt = Date.now();
        if (id !== this.chainId) {
          if (e.wrongChain !== id && !quiet) this.#log.error('RPC URL refused: it serves another chain', { url: e.label, expected: this.chainId, served: id });
          e.wrongChain = id;
          e.restUntil = now + this.#recheckMs;
          e.hardRest = true;
        } else {
          if (e.wrongChain !== undefined || e.failures > 0) this.#log.info('RPC URL back in use', { url: e.label });
          e.wrongChain = undefined;
        }
      } finally {
        e.probing = undefined;
      }
    })();
    return e.probing;
  }

  #rest(e: Endpoint, verdict: Verdict, err: unknown) {
    e.failures++;
    const backoff = Math.min(60_000, 1_000 * 2 ** Math.min(e.failures - 1, 6));
    const kind = verdict.kind;
    const now = Date.now();
    const announced = e.retryAfterUntil > now ? e.retryAfterUntil - now : undefined;
    const ms = kind === 'rate-limited' ? ((verdict.kind === 'rate-limited' ? verdict.retryAfterMs : undefined) ?? announced ?? backoff) : backoff;
    e.restUntil = now + ms;
    e.hardRest = kind === 'rate-limited';
    // A URL coming back from an outage proves its chain id again before serving (a rate limit says
    // nothing about which chain it serves).
    if (kind !== 'rate-limited') e.verifiedAt = 0;
    // One line per streak (the first failure), and one when it answers again: an outage of minutes is two lines, not hundreds.
    if (e.failures === 1) this.#log.warn(kind === 'rate-limited' ? 'RPC URL rate limited; resting it' : 'RPC URL failed; resting it', { url: e.label, rest_ms: ms, failures: e.failures, error: shortError(err) });
  }
}

type Verdict = { kind: 'answer' } | { kind: 'down' } | { kind: 'rate-limited'; retryAfterMs?: number };

const RATE_LIMIT_RE = /(rate.?limit|too many requests|request rate|requests per second|exceeded.*(capacity|quota|compute units)|daily request count|throughput)/i;

/**
 * Whether an error is the provider's trouble (fail over, rest the URL) or the node's answer
 * (give it to the caller). Exported for unit tests.
 */
export function classify(err: unknown, now = Date.now()): Verdict {
  if (err instanceof HttpRequestError) {
    if (err.status === 429) return { kind: 'rate-limited', retryAfterMs: parseRetryAfter(err.headers?.get('retry-after') ?? undefined, now) };
    // A 413 is the node refusing the request's size: the watcher's range logic handles it.
    if (err.status === 413) return { kind: 'answer' };
    return { kind: 'down' };
  }
  if (err instanceof TimeoutError) return { kind: 'down' };
  // A JSON-RPC error object: viem's transport maps it to a typed RpcError (LimitExceededRpcError for
  // -32005, InternalRpcError, …) whose cause is the RpcRequestError with the node's message.
  const rpc = err instanceof RpcRequestError ? err : err instanceof BaseError ? (err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null) : null;
  // An RpcError with no node message under it (viem's UnknownRpcError around a body it could not
  // read) is the URL's trouble, not an answer.
  if (!rpc && err instanceof RpcError && err.code === -1) return { kind: 'down' };
  if (rpc || err instanceof RpcError) {
    const e = err as BaseError & { code?: number };
    const text = `${rpc?.details ?? ''} ${e.details ?? ''} ${e.shortMessage}`;
    if (rpc?.code === 429 || e.code === 429 || RATE_LIMIT_RE.test(text)) return { kind: 'rate-limited' };
    return { kind: 'answer' };
  }
  // Anything else (a fetch that never connected, a body that is not JSON) is the URL's fault.
  return { kind: 'down' };
}

/**
 * Retry-After as milliseconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when
 * absent or unreadable. Capped at 10 minutes: a provider asking for more is down for our purposes.
 *
 * @example parseRetryAfter('3'); // 3000
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  let ms: number | undefined;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) ms = Math.max(0, t - now);
  }
  return ms === undefined ? undefined : Math.min(ms, 600_000);
}

/** An RPC URL as it may be logged: scheme and host only (providers put API keys in paths and queries). */
export function endpointLabel(url: string, index: number): string {
  try {
    const u = new URL(url);
    return `#${index + 1} ${u.protocol}//${u.host}`;
  } catch {
    return `#${index + 1}`;
  }
}

function shortError(err: unknown): string {
  const e = err as { shortMessage?: unknown; details?: unknown; message?: unknown; status?: unknown };
  const parts = [typeof e?.shortMessage === 'string' ? e.shortMessage : typeof e?.message === 'string' ? e.message : String(err)];
  if (typeof e?.status === 'number') parts.push(`status ${e.status}`);
  if (typeof e?.details === 'string') parts.push(e.details);
  return parts
    .join(' ')
    .replace(/\b(https?|wss?):\/\/[^\s"'<>]+/gi, '<rpc-url>')
    .split('\n')[0]!
    .slice(0, 200);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
