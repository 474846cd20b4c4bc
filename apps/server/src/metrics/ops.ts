import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { isTerminalOrderStatus } from '@tollgate/protocol';
import { isOrderStatus, ORDER_STATUSES } from '../orders/states.ts';
import { chainCursors, countLiveOrders, countOrders, oldestOpenTransactionAgeS, webhookBacklog, type CursorRow, type OrderCountRow, type WebhookBacklog } from './repo.ts';
import { settlementBacklog, WAITING_REASONS, type WaitingReason } from '../settlement/repo.ts';

/**
 * Operator metrics (docs/operations.md lists each with an alert). Two kinds of source:
 *  - events this process saw, reported through the narrow callbacks below, which the composition
 *    root (main.ts) hands to the services: counters, per process, summed across instances;
 *  - database state read at scrape time (orders by status, webhook backlog, chain cursors):
 *    gauges of the whole deployment, the same on every instance (aggregate them with `max`).
 * Services never import this module; it imports nothing of theirs but data shapes and the pure
 * order states.
 */

/** The order service's and transition function's view of the metrics. */
export interface OrderEvents {
  createRefused(code: string): void;
  transitioned(t: { from: string | null; to: string; trigger: string }): void;
}

/** What one watcher loop tick reports (chain/evm/watcher.ts `onTick`). */
export interface WatcherTick {
  kind: 'leader' | 'follower' | 'error';
}
export interface HeadBlock {
  number: bigint;
  timestamp: bigint;
}

/** A recorded delivery attempt (webhooks/dispatcher.ts `onRecorded`). */
export interface RecordedAttempt {
  status: 'pending' | 'failed' | 'delivered' | 'dead';
  refused: boolean;
}

/**
 * How old the counts of terminal orders may be. Live statuses are counted at every scrape (an index
 * range); the terminal ones need the whole table (bench/metrics-scrape.ts at a million orders:
 * 0.8 s on Postgres, 2.4 s on PGlite, whose one connection waits meanwhile), so they are counted
 * once a minute at most, and never more than 1 % of the time: at least 100 × the last count's
 * duration apart. They only grow, and their rate is `tollgate_order_transitions_total`'s, exact.
 */
const TERMINAL_COUNT_MAX_AGE_MS = 60_000;
const TERMINAL_COUNT_DUTY = 100;

interface Snapshot {
  orders: OrderCountRow[];
  backlog: WebhookBacklog;
  cursors: CursorRow[];
  /** DELEGATE executor transactions not yet final, by chain id. */
  settlements: Map<number, { n: number; oldestAgeS: number; byReason: Record<WaitingReason, number> }>;
  /** The database server's oldest open transaction: what holds the webhook event feed back. */
  oldestTransactionS: number;
}

export class OpsMetrics {
  private readonly refusals: Counter<'code'>;
  private readonly transitions: Counter<'from' | 'to' | 'trigger'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly tickFailures: Counter<'chain_id'>;
  private readonly lastTick: Gauge<'chain_id'>;
  private readonly scrapeErrors: Counter;
  private readonly feeBumps: Counter<'chain_id' | 'kind' | 'outcome'>;
  /** Latest head seen by this process's watcher per chain, while it leads that chain. */
  private readonly heads = new Map<number, { number: bigint; timestamp: bigint }>();
  private snapshot: Promise<Snapshot | undefined> | undefined;
  private terminal: { at: number; rows: OrderCountRow[]; tookMs: number } | undefined;
  readonly registry: Registry;
  private readonly source: { db: Database; clock: Clock };

  constructor(registry: Registry, source: { db: Database; clock: Clock }) {
    this.registry = registry;
    this.source = source;
    const registers = [registry];
    this.refusals = new Counter({ name: 'tollgate_order_create_refusals_total', help: 'Order creations refused by the order service, by error code', labelNames: ['code'], registers });
    this.transitions = new Counter({
      name: 'tollgate_order_transitions_total',
      help: 'Order status changes made by this process (from="none" for creation), by from, to and trigger',
      labelNames: ['from', 'to', 'trigger'],
      registers,
    });
    this.attempts = new Counter({
      name: 'tollgate_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts recorded by this process, by outcome: delivered, retry (timeout, network, 5xx, 429, 408, 3xx), refused (other 4xx; retried), gave_up (last attempt failed: dead)',
      labelNames: ['outcome'],
      registers,
    });
    this.tickFailures = new Counter({ name: 'tollgate_chain_watcher_tick_failures_total', help: 'Chain watcher ticks that failed (RPC or database), by chain', labelNames: ['chain_id'], registers });
    this.lastTick = new Gauge({
      name: 'tollgate_chain_watcher_last_tick_timestamp_seconds',
      help: 'Unix time of the last successful tick of the chain watcher this process leads, by chain',
      labelNames: ['chain_id'],
      registers,
    });
    this.feeBumps = new Counter({
      name: 'tollgate_settlement_fee_bumps_total',
      help: 'Stuck executor transactions this process replaced with higher fees (outcome="bumped"), or could not because the replacement would exceed fee_bump.max_fee_per_gas (outcome="capped", once per transaction), by chain and kind (settle, refund, relay, x402)',
      labelNames: ['chain_id', 'kind', 'outcome'],
      registers,
    });
    const load = () => this.load();
    this.scrapeErrors = new Counter({
      name: 'tollgate_scrape_db_errors_total',
      help: 'Scrapes whose database reads failed (the database gauges are then absent, or NaN when they have no labels)',
      registers,
      // Waits for this scrape's reads, so a failure is reported by the scrape it happened in.
      collect: async () => void (await load()),
    });
    this.installDatabaseGauges();
  }

  /** The port of OrderService and transitionOrder. */
  readonly orders: OrderEvents = {
    createRefused: (code) => this.refusals.inc({ code }),
    transitioned: (t) => this.transitions.inc({ from: t.from ?? 'none', to: t.to, trigger: t.trigger }),
  };

  /** The port of the chain watcher loops: one call per tick with the head that tick read. */
  readonly watcherTicked = (chainId: number, t: WatcherTick, head: HeadBlock | undefined): void => {
    const chain_id = String(chainId);
    if (t.kind === 'error') return void this.tickFailures.inc({ chain_id });
    if (t.kind === 'follower' || !head) {
      // Another process leads: its /metrics reports the lag; a stale head here would mislead.
      this.heads.delete(chainId);
      this.lastTick.remove({ chain_id });
      return;
    }
    this.heads.set(chainId, { number: head.number, timestamp: head.timestamp });
    this.lastTick.set({ chain_id }, this.source.clock.now() / 1000);
  };

  /** The port of the settlement executors' fee bumping (settlement/fee-bump.ts `observeFeeBumps`). */
  readonly feeBumped = (e: { chainId: number; kind: string; outcome: 'bumped' | 'capped' }): void => {
    this.feeBumps.inc({ chain_id: String(e.chainId), kind: e.kind, outcome: e.outcome });
  };

  /** The port of the webhook dispatcher: attempts whose outcome was just recorded. */
  readonly deliveries = (results: readonly RecordedAttempt[]): void => {
    for (const r of results) this.attempts.inc({ outcome: outcomeOf(r) });
  };

  /** One read per scrape shared by every gauge below (prom-client collects them concurrently). */
  private load(): Promise<Snapshot | undefined> {
    this.snapshot ??= (async () => {
      const { db, clock } = this.source;
      try {
        const now = clock.now();
        const [live, backlog, cursors, settlements, oldestTransactionS] = await Promise.all([countLiveOrders(db), webhookBacklog(db, new Date(now)), chainCursors(db), settlementBacklog(db, new Date(now)), oldestOpenTransactionAgeS(db)]);
        if (!this.terminal || now - this.terminal.at >= Math.max(TERMINAL_COUNT_MAX_AGE_MS, TERMINAL_COUNT_DUTY * this.terminal.tookMs)) {
          const started = performance.now();
          const rows = (await countOrders(db)).filter((r) => isOrderStatus(r.status) && isTerminalOrderStatus(r.status));
          this.terminal = { at: now, rows, tookMs: performance.now() - started };
        }
        return { orders: [...live, ...this.terminal.rows], backlog, cursors, settlements, oldestTransactionS };
      } catch {
        this.scrapeErrors.inc();
        return undefined;
      }
    })().finally(() => (this.snapshot = undefined));
    return this.snapshot;
  }

  private installDatabaseGauges(): void {
    const registers = [this.registry];
    const load = () => this.load();
    const gauge = <L extends string>(name: string, help: string, labelNames: L[], fill: (g: Gauge<L>, s: Snapshot) => void) =>
      new Gauge<L>({
        name,
        help,
        labelNames,
        registers,
        collect: async function (this: Gauge<L>) {
          const s = await load();
          this.reset();
          if (s) fill(this, s);
          // Unknown, not 0: prom-client always prints a gauge without labels, so say NaN.
          else if (labelNames.length === 0) (this as Gauge<string>).set(NaN);
        },
      });
    gauge('tollgate_orders', 'Orders by status and flow (database-wide; terminal statuses refreshed once a minute)', ['status', 'flow'], (g, s) => {
      // Every status of every flow seen: an absent series alerts on nothing.
      for (const flow of new Set(s.orders.map((r) => r.flow))) for (const status of ORDER_STATUSES) g.set({ status, flow }, 0);
      for (const r of s.orders) g.set({ status: r.status, flow: r.flow }, r.n);
    });
    gauge('tollgate_webhook_backlog', 'Undelivered webhook deliveries of enabled endpoints, by status (pending: never tried; failed: waiting for a retry)', ['status'], (g, s) => {
      g.set({ status: 'pending' }, s.backlog.pending);
      g.set({ status: 'failed' }, s.backlog.failed);
    });
    gauge('tollgate_webhook_backlog_due', 'Undelivered deliveries due now and not in flight (a healthy dispatcher keeps this near 0)', [], (g, s) => g.set(s.backlog.due));
    gauge('tollgate_webhook_oldest_pending_age_seconds', 'Age of the oldest undelivered delivery (0 when none)', [], (g, s) => g.set(Math.max(0, s.backlog.oldest_age_s)));
    gauge('tollgate_webhook_oldest_due_age_seconds', 'How long the most overdue delivery has been due (0 when none): the dispatcher lag', [], (g, s) => g.set(Math.max(0, s.backlog.oldest_due_s)));
    gauge('tollgate_db_oldest_transaction_age_seconds', 'Age of the oldest open transaction on the database server this role can see: the webhook event feed serves an event only after every older transaction has ended', [], (g, s) =>
      g.set(s.oldestTransactionS),
    );
    // Every chain with a watcher cursor gets a series (0 when idle): an absent series alerts on nothing.
    const settlementChains = (s: Snapshot) => new Set([...s.cursors.map((c) => c.chain_id), ...s.settlements.keys()]);
    gauge('tollgate_settlement_backlog', 'DELEGATE executor transactions (settlements, refunds, relays) recorded but not final yet, by chain', ['chain_id'], (g, s) => {
      for (const id of settlementChains(s)) g.set({ chain_id: String(id) }, s.settlements.get(id)?.n ?? 0);
    });
    gauge('tollgate_settlement_waiting', 'DELEGATE executor transactions not final yet, by chain and why: unsent, on_chain (not mined or not final), fee_bumped', ['chain_id', 'reason'], (g, s) => {
      for (const id of settlementChains(s)) for (const reason of WAITING_REASONS) g.set({ chain_id: String(id), reason }, s.settlements.get(id)?.byReason[reason] ?? 0);
    });
    gauge('tollgate_settlement_oldest_unfinished_age_seconds', 'Age of the oldest DELEGATE executor transaction not final yet, by chain (0 when none)', ['chain_id'], (g, s) => {
      for (const id of settlementChains(s)) g.set({ chain_id: String(id) }, s.settlements.get(id)?.oldestAgeS ?? 0);
    });
    const lag = (s: Snapshot) =>
      s.cursors.flatMap((c) => {
        const head = this.heads.get(c.chain_id);
        return head ? [{ c, head }] : [];
      });
    gauge('tollgate_chain_head_lag_blocks', 'Blocks between the chain head and the last block the watcher scanned, by chain (reported by the leading process)', ['chain_id'], (g, s) => {
      for (const { c, head } of lag(s)) g.set({ chain_id: String(c.chain_id) }, Math.max(0, Number(head.number) - c.block_number));
    });
    gauge('tollgate_chain_head_lag_seconds', 'Chain time between the head block and the last block the watcher scanned, by chain (reported by the leading process)', ['chain_id'], (g, s) => {
      for (const { c, head } of lag(s)) {
        if (c.block_ts !== null) g.set({ chain_id: String(c.chain_id) }, Math.max(0, Number(head.timestamp) - c.block_ts));
      }
    });
  }
}

function outcomeOf(r: RecordedAttempt): 'delivered' | 'retry' | 'refused' | 'gave_up' {
  if (r.status === 'delivered') return 'delivered';
  if (r.status === 'dead') return 'gave_up';
  return r.refused ? 'refused' : 'retry';
}
