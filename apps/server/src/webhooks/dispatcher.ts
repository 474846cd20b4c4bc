import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { WebhookEventName } from '@tollgate/protocol';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { decryptSecret } from '../merchants/secrets.ts';
import { processLog } from '../log.ts';
import type { Worker } from '../workers.ts';
import { claimDue, recordResults, type AttemptResult, type ClaimedDelivery } from './deliveries-repo.ts';
import { classifyStatus, retryDelayMs } from './schedule.ts';
import { DeliveryAgents, postDelivery } from './send.ts';
import { deliveryHeaders, envelopeBody } from './signing.ts';
import { logSafeError } from '../db/log-safe.ts';
import { onOutboxWrite } from './outbox-signal.ts';

/** What the dispatcher needs from the composition root. */
export type DispatchDeps = { db: Database; clock: Clock; config: Config };

export interface DispatcherOptions {
  /** Identifies this dispatcher's claims (`locked_by`); unique per process by default. */
  workerId?: string;
  /** Rows per claim statement. */
  batchSize?: number;
  /** Sends in flight at once (the worker keeps refilling up to this). */
  maxInFlight?: number;
  /** A 2xx must be complete within this (docs/webhooks.md: 10 s). */
  timeoutMs?: number;
  /** How long a claim is held; a crashed dispatcher's claims come back after it. */
  leaseMs?: number;
  /** Idle poll interval of the worker. */
  pollIntervalMs?: number;
  /** Jitter source (tests pass a constant). */
  random?: () => number;
  /** Called with the attempts just recorded (metrics: delivery outcomes). */
  onRecorded?: (results: readonly AttemptResult[]) => void;
}

// pollIntervalMs: what an idle dispatcher waits between claims. A write to the outbox by this
// process signals its dispatchers (outbox-signal.ts), which then claim at once and every
// POKED_POLL_MS for POKED_WINDOW_MS (the writer's transaction commits meanwhile), so an in-process
// event is sent within milliseconds of its commit; the idle poll only finds other processes'
// writes (the `api` role next to a `worker`) and retries coming due. It was 25 ms with no signal:
// 40 claims a second per idle process, which on PGlite (one connection, in-process) cost a tenth
// of a core, queued behind the chain watcher.
const DEFAULTS = { batchSize: 200, maxInFlight: 400, timeoutMs: 10_000, pollIntervalMs: 250 };
const POKED_POLL_MS = 5;
const POKED_WINDOW_MS = 100;
/** Longest a finished attempt waits in memory before it is recorded. */
const FLUSH_MS = 10;

export interface DispatchSummary {
  claimed: number;
  delivered: number;
  failed: number;
  dead: number;
}

/**
 * Sends one claimed delivery and returns its attempt record (never throws). The envelope's
 * `created_at` and the Standard Webhooks timestamp are this attempt's time (deps.clock).
 */
class Sender {
  private readonly secrets = new Map<string, string>();
  private readonly deps: DispatchDeps;
  private readonly agents: DeliveryAgents;
  private readonly timeoutMs: number;
  private readonly random: () => number;

  constructor(deps: DispatchDeps, agents: DeliveryAgents, timeoutMs: number, random: () => number) {
    this.deps = deps;
    this.agents = agents;
    this.timeoutMs = timeoutMs;
    this.random = random;
  }

  private secret(endpointId: string, ciphertext: string): string {
    const key = `${endpointId}:${ciphertext}`;
    let s = this.secrets.get(key);
    if (s === undefined) {
      if (this.secrets.size > 10_000) this.secrets.clear();
      s = decryptSecret(this.deps.config.masterKey, ciphertext, endpointId);
      this.secrets.set(key, s);
    }
    return s;
  }

  async deliver(c: ClaimedDelivery, signal?: AbortSignal): Promise<AttemptResult> {
    const attemptedAt = new Date(this.deps.clock.now());
    let sent: { statusCode: number | null; latencyMs: number; error: string | null; responseBody: string | null };
    try {
      const prevValid = c.previous_secret_ciphertext !== null && c.previous_secret_expires_at !== null && c.previous_secret_expires_at > attemptedAt;
      const secrets = {
        current: this.secret(c.endpoint_id, c.secret_ciphertext),
        previous: prevValid ? this.secret(c.endpoint_id, c.previous_secret_ciphertext!) : undefined,
      };
      const body = envelopeBody(c.event_id, c.event as WebhookEventName, c.payload, attemptedAt);
      const headers = {
        ...deliveryHeaders({ secrets, event: c.event as WebhookEventName, eventId: c.event_id, timestampSeconds: Math.floor(attemptedAt.getTime() / 1000), rawBody: body }),
        // Not signed: lets receivers and operators correlate a request with its delivery record.
        'X-Webhook-Delivery': c.id,
        'X-Webhook-Attempt': String(c.attempt_count),
      };
      sent = await postDelivery(this.agents, c.url, headers, body, this.timeoutMs, signal);
    } catch (err) {
      sent = { statusCode: null, latencyMs: 0, error: `could not prepare the delivery: ${(err as Error).message}`, responseBody: null };
    }
    const outcome = sent.statusCode === null ? { kind: 'retry' as const } : classifyStatus(sent.statusCode);
    const base = { deliveryId: c.id, attempt: c.attempt_count, attemptedAt, ...sent, refused: outcome.kind === 'refused' };
    if (outcome.kind === 'delivered') return { ...base, status: 'delivered', nextAttemptAt: null };
    const delay = retryDelayMs(c.attempt_count, this.random);
    if (delay === undefined) return { ...base, status: 'dead', nextAttemptAt: null };
    return { ...base, status: 'failed', nextAttemptAt: new Date(attemptedAt.getTime() + delay) };
  }
}

function resolveOptions(deps: DispatchDeps, opts: DispatcherOptions) {
  const timeoutMs = opts.timeoutMs ?? DEFAULTS.timeoutMs;
  return {
    workerId: opts.workerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    batchSize: opts.batchSize ?? DEFAULTS.batchSize,
    maxInFlight: Math.max(opts.maxInFlight ?? DEFAULTS.maxInFlight, opts.batchSize ?? DEFAULTS.batchSize),
    timeoutMs,
    // Longer than a send can take plus generous room to record it: only a dead or wedged
    // dispatcher ever loses its claims.
    leaseMs: opts.leaseMs ?? timeoutMs + 60_000,
    pollIntervalMs: opts.pollIntervalMs ?? DEFAULTS.pollIntervalMs,
    random: opts.random ?? Math.random,
    environment: deps.config.environment,
  };
}

function summarize(claimed: number, results: AttemptResult[]): DispatchSummary {
  const count = (s: AttemptResult['status']) => results.filter((r) => r.status === s).length;
  return { claimed, delivered: count('delivered'), failed: count('failed'), dead: count('dead') };
}

/**
 * One claim → send → record round (tests and tools): claims up to `batchSize` due deliveries,
 * sends them concurrently, records every attempt, and returns what happened.
 *
 * @example
 * clock.advance(10); const r = await dispatchOnce(deps, { timeoutMs: 200 }); // r.delivered …
 */
export async function dispatchOnce(deps: DispatchDeps, opts: DispatcherOptions = {}): Promise<DispatchSummary> {
  const o = resolveOptions(deps, opts);
  const agents = new DeliveryAgents(o.environment);
  try {
    const sender = new Sender(deps, agents, o.timeoutMs, o.random);
    const now = deps.clock.now();
    const claimed = await claimDue(deps.db, { workerId: o.workerId, now: new Date(now), leaseUntil: new Date(now + o.leaseMs), limit: o.batchSize });
    const results = await Promise.all(claimed.map((c) => sender.deliver(c)));
    await recordResults(deps.db, o.workerId, results);
    opts.onRecorded?.(results);
    return summarize(claimed.length, results);
  } finally {
    agents.destroy();
  }
}

/**
 * The webhook dispatcher worker: a pipeline rather than claim-send-wait rounds, so one receiver
 * that hangs for the full timeout does not stall everybody else's deliveries. It keeps up to
 * `maxInFlight` claimed deliveries going (sending, or sent and waiting to be recorded), claims
 * more whenever half of that room is free, and records finished attempts in batches (one
 * statement per batch) in the background, so claiming and recording overlap. Why: with claim and
 * record in sequence, 84 % of the wall time went to waiting on those two statements (14 ms +
 * 25 ms per 200 rows). bench/webhooks.ts, same run, 2 cores, Postgres: 6,114 deliveries/s for
 * this pipeline vs 4,889/s for dispatchOnce rounds (medians of 3). Several processes may run it
 * on one Postgres. Never throws: a database outage is logged and retried; claims held meanwhile
 * lapse with their lease.
 */
export function startWebhookDispatcher(deps: DispatchDeps, opts: DispatcherOptions = {}, log: (msg: string, err: unknown) => void = defaultLog): Worker {
  const o = resolveOptions(deps, opts);
  const agents = new DeliveryAgents(o.environment);
  const sender = new Sender(deps, agents, o.timeoutMs, o.random);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one listener per send in flight, by design
  const threshold = Math.min(o.batchSize, o.maxInFlight / 2);
  let stopped = false;
  let inFlight = 0; // sends not finished
  let buffer: AttemptResult[] = []; // finished, not yet recorded
  let bufferSince = 0;
  let writing = 0; // being recorded now
  let recording: Promise<void> | undefined;
  let recordRetryAt = 0;
  let nextClaimAt = 0;
  let pokedAt = Number.NEGATIVE_INFINITY;
  let wake: (() => void) | undefined;
  const unsubscribe = onOutboxWrite(() => {
    pokedAt = Date.now();
    nextClaimAt = 0;
    wake?.();
  });
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => ((wake = undefined), resolve()), ms);
      wake = () => ((wake = undefined), clearTimeout(t), resolve());
    });

  const record = () => {
    const batch = buffer;
    buffer = [];
    writing = batch.length;
    recording = recordResults(deps.db, o.workerId, batch)
      .then(
        () => opts.onRecorded?.(batch),
        (err) => {
          // Keep them for the next try; their leases cover the wait.
          if (buffer.length === 0) bufferSince = Date.now();
          buffer = batch.concat(buffer);
          recordRetryAt = Date.now() + 1000;
          log('webhook dispatcher: could not record attempts; retrying', err);
        },
      )
      .finally(() => {
        writing = 0;
        recording = undefined;
        wake?.();
      });
  };
  // A full batch, or whatever is there once nothing is in flight or the oldest result waited FLUSH_MS.
  const recordDue = () => !recording && buffer.length > 0 && Date.now() >= recordRetryAt && (buffer.length >= o.batchSize || inFlight === 0 || Date.now() - bufferSince >= FLUSH_MS);

  const loop = async () => {
    while (!stopped) {
      try {
        let full = false;
        if (o.maxInFlight - inFlight - buffer.length - writing >= threshold && Date.now() >= nextClaimAt) {
          const now = deps.clock.now();
          const limit = Math.min(o.maxInFlight - inFlight - buffer.length - writing, o.batchSize);
          const rows = await claimDue(deps.db, { workerId: o.workerId, now: new Date(now), leaseUntil: new Date(now + o.leaseMs), limit });
          full = rows.length === limit;
          // A short claim means the queue is drained for now: poll again after the interval, or
          // soon while a signalled write may still be committing.
          if (!full) nextClaimAt = Date.now() + (Date.now() - pokedAt < POKED_WINDOW_MS ? POKED_POLL_MS : o.pollIntervalMs);
          for (const row of rows) {
            inFlight++;
            void sender.deliver(row, abort.signal).then((r) => {
              inFlight--;
              if (buffer.length === 0) bufferSince = Date.now();
              buffer.push(r);
              if (recordDue()) wake?.();
            });
          }
        }
        if (recordDue()) record();
        if (full) continue; // more may be due right now
        // Sleep until the next poll or the next record is due; a finished send or record wakes us.
        const untilClaim = nextClaimAt - Date.now();
        const untilRecord = buffer.length > 0 && !recording ? Math.max(FLUSH_MS - (Date.now() - bufferSince), recordRetryAt - Date.now()) : Infinity;
        const d = Math.min(untilClaim, untilRecord, o.pollIntervalMs);
        if (!stopped) await sleep(Math.max(d, 1));
      } catch (err) {
        log('webhook dispatcher: database error; retrying', err);
        if (!stopped) await sleep(1000);
      }
    }
  };
  const running = loop();

  return {
    name: 'webhook-dispatcher',
    async stop() {
      stopped = true;
      unsubscribe();
      wake?.();
      await running;
      // Give sends in flight a moment, then cut them off; their attempts are recorded as aborted
      // and retried on schedule (the receiver may have got them: at-least-once).
      const deadline = Date.now() + 1000;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      abort.abort();
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
      await recording;
      if (buffer.length > 0) {
        record();
        await recording;
      }
      agents.destroy();
    },
  };
}

function defaultLog(msg: string, err: unknown) {
  // Structure only: a database error's message and detail can carry the row's values.
  processLog.error({ err: logSafeError(err) }, msg);
}
