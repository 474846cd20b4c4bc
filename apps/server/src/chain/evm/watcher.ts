import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ChainConfig } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import { systemClock, type Clock } from '../../clock.ts';
import type { Worker } from '../../workers.ts';
import { createChainLogger, yieldToEventLoop, type ChainLogger, type WatchContext } from './context.ts';
import { runDepthPass } from './depth.ts';
import { acquireLease, releaseLease } from './lease.ts';
import { checkCursor, rewindAfterReorg, verifyGenesis, type CursorCheck } from './reorg.ts';
import { createChainRpc, describeError, isRangeError, rangeHint, type BlockRef, type ChainRpc, type ChainRpcOptions } from './rpc.ts';
import { ensureCursor, listWatchedAddresses, nextRange, scanRange, type Cursor } from './scan.ts';

/**
 * One chain's watcher (DESIGN.md "Core flows" 2). A tick:
 *  1. takes or renews the chain's lease; a follower does nothing else;
 *  2. reads the head, THEN the watched addresses (see `listWatchedAddresses` for why this order);
 *  3. checks the cursor's hash (and, on the first tick or any anomaly, the genesis hash); on a
 *     mismatch rewinds (reorg.ts);
 *  4. scans `cursor+1 … head` in ranges (scan.ts), renewing the lease between ranges and yielding
 *     to the event loop; a node that refuses a range size halves it;
 *  5. runs the depth pass (depth.ts): confirm, invoice, progress; a changed hash there rewinds too.
 * A tick never throws: RPC and database failures come back as `{ kind: 'error' }` and the loop
 * backs off. Correctness never depends on the tick being the only one running (see lease.ts).
 */

export interface ChainWatcherOptions {
  chain: ChainConfig;
  db: Database;
  clock?: Clock;
  /** Defaults to a viem client on `chain.rpcUrl` (`createChainRpc`). */
  rpc?: ChainRpc;
  rpcOptions?: ChainRpcOptions;
  /** Blocks per eth_getLogs range (default 2,000: under every major provider's cap; Alchemy and Infura allow 2k–10k). */
  rangeSize?: number;
  /** Ranges per tick before the depth pass runs (default 50); a catch-up continues at once in the next tick. */
  maxRangesPerTick?: number;
  /** Lease duration; default max(5 s, 3 × poll interval) so a healthy leader never lapses between ticks. */
  leaseMs?: number;
  /** Lease holder id; default `w-<hostname>:<pid>:<random>`, unique per watcher instance. */
  holderId?: string;
  /** First block to scan when the chain has no cursor yet (default: `head - finality_confirmations`). */
  startBlock?: bigint;
  log?: ChainLogger;
  /** Called by the loop after every tick with the head this tick read (metrics: head lag). */
  onTick?: (chainId: number, r: TickResult, head: BlockRef | undefined) => void;
}

export type TickResult =
  | { kind: 'follower' }
  | { kind: 'error'; error: string }
  | {
      kind: 'leader';
      head: bigint;
      cursor: bigint;
      /** True when the cursor reached the head this tick. */
      caughtUp: boolean;
      /** The loop should tick again at once (range budget used up mid catch-up, or a rewind to rescan). */
      continueNow: boolean;
      /** New transfer rows recorded. */
      transfers: number;
      matched: number;
      confirmed: number;
      invoiced: number;
      orphaned: number;
      reorgs: number;
    };

/**
 * Creates a watcher for one chain; call `tick()` (tests) or run it with `startChainWatchers`.
 *
 * @example
 * const w = createChainWatcher({ chain: config.chains[0]!, db, rangeSize: 500 });
 * const r = await w.tick(); // { kind: 'leader', head: 120n, cursor: 120n, caughtUp: true, matched: 1, … }
 * await w.release();
 */
export function createChainWatcher(opts: ChainWatcherOptions): ChainWatcher {
  return new ChainWatcher(opts);
}

export class ChainWatcher {
  readonly holderId: string;
  readonly chain: ChainConfig;
  readonly onTick: ChainWatcherOptions['onTick'];
  /** The head read by the latest tick that got one. */
  lastHead: BlockRef | undefined;
  private readonly ctx: WatchContext;
  private readonly maxRangeSize: number;
  private readonly maxRangesPerTick: number;
  private readonly leaseMs: number;
  private readonly startBlock: bigint | undefined;
  private currentRangeSize: number;
  private successesSinceShrink = 0;
  private running: Promise<TickResult> | undefined;
  private interrupted = false;
  private genesisVerified = false;

  constructor(opts: ChainWatcherOptions) {
    this.chain = opts.chain;
    // host:pid in the id: an operator (or a test) looking at chain_leases can tell which process leads.
    this.holderId = opts.holderId ?? `w-${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    const log = opts.log ?? createChainLogger('info', { chain_id: opts.chain.chainId });
    this.ctx = { db: opts.db, rpc: opts.rpc ?? createChainRpc(opts.chain, opts.rpcOptions), chain: opts.chain, clock: opts.clock ?? systemClock, log };
    this.maxRangeSize = Math.max(1, opts.rangeSize ?? 2_000);
    this.currentRangeSize = this.maxRangeSize;
    this.maxRangesPerTick = Math.max(1, opts.maxRangesPerTick ?? 50);
    this.leaseMs = opts.leaseMs ?? Math.max(5_000, 3 * opts.chain.pollIntervalMs);
    this.startBlock = opts.startBlock;
    this.onTick = opts.onTick;
  }

  /** The eth_getLogs range currently in use (shrinks on range errors, grows back after successes). */
  get rangeSize(): number {
    return this.currentRangeSize;
  }

  /** Runs one tick; concurrent calls on one instance share the running tick. Never rejects. */
  tick(): Promise<TickResult> {
    this.running ??= this.runTick().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Makes the running tick stop after its current range (shutdown should not wait for a 50-range
   * catch-up); later ticks run normally again.
   */
  interrupt(): void {
    this.interrupted = true;
  }

  /** Gives the lease up so another process can take over at once (graceful stop). */
  async release(): Promise<void> {
    await releaseLease(this.ctx.db, this.chain.chainId, this.holderId);
  }

  private async runTick(): Promise<TickResult> {
    const { ctx } = this;
    this.interrupted = false;
    try {
      if (!(await acquireLease(ctx.db, this.chain.chainId, this.holderId, this.leaseMs))) return { kind: 'follower' };
      const head = await ctx.rpc.getHead();
      this.lastHead = head;
      const addresses = await listWatchedAddresses(ctx.db, this.chain.chainId);
      let cursor: Cursor = await ensureCursor(ctx, head, this.startBlock);
      const r = { kind: 'leader' as const, head: head.number, cursor: cursor.blockNumber, caughtUp: false, continueNow: false, transfers: 0, matched: 0, confirmed: 0, invoiced: 0, orphaned: 0, reorgs: 0 };

      let check: CursorCheck = await checkCursor(ctx.rpc, cursor, head);
      if (!this.genesisVerified || check.kind !== 'ok') {
        // Once per instance, and on any anomaly: is this still the chain the cursor was built on?
        const g = await verifyGenesis(ctx, cursor);
        if (g.kind === 'reset') {
          if (g.rewind.kind !== 'rewound') return r;
          cursor = g.rewind.cursor;
          check = { kind: 'ok' };
          r.reorgs++;
          r.orphaned += g.rewind.orphaned;
        }
        this.genesisVerified = true;
      }
      if (check.kind === 'reorg') {
        const rw = await rewindAfterReorg(ctx, { mismatchAt: check.at, cursor });
        // Lost the cursor to another watcher, or the node cannot serve the rewind block yet: wait.
        if (rw.kind !== 'rewound') return r;
        cursor = rw.cursor;
        r.reorgs++;
        r.orphaned += rw.orphaned;
      }

      if (check.kind === 'behind') {
        ctx.log.debug('node head is below the cursor; waiting', { head: head.number, cursor: cursor.blockNumber });
      } else {
        let ranges = 0;
        for (let range = nextRange(cursor.blockNumber, head.number, this.currentRangeSize); range; range = nextRange(cursor.blockNumber, head.number, this.currentRangeSize)) {
          if (ranges >= this.maxRangesPerTick || this.interrupted) {
            r.continueNow = true;
            break;
          }
          if (ranges > 0) {
            await yieldToEventLoop();
            // A long catch-up outlives a lease: renew it, and stop if another process took over.
            if (!(await acquireLease(ctx.db, this.chain.chainId, this.holderId, this.leaseMs))) break;
          }
          let out;
          try {
            out = await scanRange(ctx, cursor, range, head, addresses);
          } catch (err) {
            if (!isRangeError(err) || this.currentRangeSize === 1) throw err;
            // The provider's own figure when it gives one (rangeHint), else half.
            const hint = rangeHint(err);
            this.currentRangeSize = Math.max(1, hint !== undefined && hint < this.currentRangeSize ? hint : Math.floor(this.currentRangeSize / 2));
            this.successesSinceShrink = 0;
            ctx.log.warn('eth_getLogs range refused; shrinking', { range_size: this.currentRangeSize, error: describeError(err) });
            continue;
          }
          ranges++;
          if (out.kind !== 'scanned') {
            if (out.kind === 'chain-moved') ctx.log.info('chain changed during scan; retrying next tick', { detail: out.detail });
            else ctx.log.debug('cursor moved by another watcher; stopping this scan', { holder: this.holderId });
            break;
          }
          this.growRangeAfterSuccess();
          cursor = out.cursor;
          r.transfers += out.transfers;
          r.matched += out.decisions.filter((d) => d.kind === 'matched').length;
        }
        r.caughtUp = cursor.blockNumber >= head.number;
      }
      r.cursor = cursor.blockNumber;

      const depth = await runDepthPass(ctx, head);
      r.confirmed += depth.confirmed.length;
      r.invoiced += depth.invoiced.length;
      if (depth.reorgAt !== undefined) {
        ctx.log.warn('paying transfer block hash changed', { block: depth.reorgAt });
        const rw = await rewindAfterReorg(ctx, { mismatchAt: depth.reorgAt, cursor });
        if (rw.kind === 'rewound') {
          r.reorgs++;
          r.orphaned += rw.orphaned;
          r.cursor = rw.cursor.blockNumber;
          r.caughtUp = false;
          r.continueNow = true;
        }
      }
      if (r.matched + r.confirmed + r.invoiced + r.orphaned > 0) {
        ctx.log.info('chain tick', { head: r.head, cursor: r.cursor, matched: r.matched, confirmed: r.confirmed, invoiced: r.invoiced, orphaned: r.orphaned });
      }
      return r;
    } catch (err) {
      const error = describeError(err);
      ctx.log.error('chain watcher tick failed', { error });
      return { kind: 'error', error };
    }
  }

  /** After a shrink, double back towards the configured size once 10 ranges in a row succeeded. */
  private growRangeAfterSuccess() {
    if (this.currentRangeSize >= this.maxRangeSize) return;
    if (++this.successesSinceShrink < 10) return;
    this.currentRangeSize = Math.min(this.maxRangeSize, this.currentRangeSize * 2);
    this.successesSinceShrink = 0;
  }
}

/**
 * The delay after `failures` consecutive failed ticks: the poll interval doubled per failure, capped
 * at 30 s, with equal jitter (half fixed, half random) so a dead endpoint is retried neither in a
 * tight loop nor in lockstep by every process.
 *
 * @example
 * tickBackoff(1, 1000); // 1000..2000
 * tickBackoff(10, 1000); // 15000..30000
 */
export function tickBackoff(failures: number, pollMs: number, random: () => number = Math.random): number {
  const cap = Math.min(30_000, pollMs * 2 ** Math.min(failures, 20));
  return Math.floor(cap / 2 + random() * (cap / 2));
}

/**
 * Runs `watcher` every `chain.pollIntervalMs` until stopped: immediately again while catching up
 * (`continueNow`),
 * with `tickBackoff` after failures. The loop cannot throw (ticks never reject); `stop()` waits
 * for the running tick and releases the lease.
 *
 * @example
 * const worker = runChainWatcher(createChainWatcher({ chain, db }));
 * // … on shutdown
 * await worker.stop();
 */
export function runChainWatcher(watcher: ChainWatcher): Worker {
  let stopped = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  const pollMs = watcher.chain.pollIntervalMs;
  const done = (async () => {
    let failures = 0;
    while (!stopped) {
      const r = await watcher.tick();
      watcher.onTick?.(watcher.chain.chainId, r, watcher.lastHead);
      let delay = pollMs;
      if (r.kind === 'error') delay = tickBackoff(++failures, pollMs);
      else {
        failures = 0;
        if (r.kind === 'leader' && r.continueNow) delay = 0;
      }
      if (!stopped) await sleep(delay);
    }
  })();
  return {
    name: `chain-watcher:${watcher.chain.chainId}`,
    async stop() {
      stopped = true;
      watcher.interrupt();
      wake?.();
      await done;
      await watcher.release().catch(() => {});
    },
  };
}
