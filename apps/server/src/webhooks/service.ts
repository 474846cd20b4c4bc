import { generateWebhookSecret, newId, type WebhookEventName } from '@tollgate/protocol';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { getMerchant, listWallets, lockMerchant } from '../merchants/repo.ts';
import { encryptSecret } from '../merchants/secrets.ts';
import * as dq from './deliveries-repo.ts';
import { DEFAULT_ROTATION_OVERLAP_SECONDS, MAX_ENABLED_ENDPOINTS } from './limits.ts';
import { emitEvent } from './outbox.ts';
import * as repo from './repo.ts';
import { samplePayload } from './samples.ts';
import { checkEndpointUrl, type Resolver } from './url-policy.ts';

export type CreateEndpointOutcome = { kind: 'created'; endpoint: repo.EndpointRow; secret: string } | { kind: 'merchant_not_found' } | { kind: 'limit' } | { kind: 'url_refused'; code: 'invalid_request' | 'webhook_url_not_allowed'; reason: string };

export type RedeliverOutcome =
  /** a delivered or dead delivery: a new delivery row was queued (the old one stays as history) */
  | { kind: 'redelivered'; delivery: dq.DeliveryRow }
  /** a failing delivery: its next attempt was moved to now */
  | { kind: 'requeued'; delivery: dq.DeliveryRow }
  /** pending, or being sent right now: nothing to do */
  | { kind: 'already_queued'; delivery: dq.DeliveryRow }
  | { kind: 'not_found' }
  | { kind: 'endpoint_disabled' };

export interface DeliveryWithAttempts extends dq.DeliveryRow {
  attempts: dq.AttemptRow[];
}

/** Bulk redelivery handles at most this many dead deliveries per call (the answer says if more remain). */
export const MAX_BULK_REDELIVERIES = 10_000;

/**
 * Webhook endpoints, test events, delivery listings and redelivery. Returns typed outcomes; the
 * admin routes map them to HTTP. Sending is the dispatcher's job (dispatcher.ts).
 */
export class WebhookService {
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly resolve?: Resolver;
  constructor(db: Database, config: Config, clock: Clock, resolve?: Resolver) {
    this.db = db;
    this.config = config;
    this.clock = clock;
    this.resolve = resolve;
  }

  private now(): Date {
    return new Date(this.clock.now());
  }

  async createEndpoint(merchantId: string, input: { url: string; events: WebhookEventName[] }): Promise<CreateEndpointOutcome> {
    // DNS before the transaction: a slow resolver must not hold the merchant lock.
    const check = await checkEndpointUrl(input.url, this.config.environment, this.resolve);
    if (!check.ok) return { kind: 'url_refused', code: check.code, reason: check.reason };
    const id = newId('whe');
    const secret = generateWebhookSecret();
    return this.db.transaction(async (tx) => {
      // The merchant row lock serializes endpoint changes, so the limit holds under races.
      if (!(await lockMerchant(tx, merchantId))) return { kind: 'merchant_not_found' } as const;
      if ((await repo.countEnabledEndpoints(tx, merchantId)) >= MAX_ENABLED_ENDPOINTS) return { kind: 'limit' } as const;
      const endpoint = await repo.insertEndpoint(tx, {
        id,
        merchantId,
        url: check.url,
        events: [...new Set(input.events)],
        ciphertext: encryptSecret(this.config.masterKey, secret, id),
        now: this.now(),
      });
      return { kind: 'created', endpoint, secret } as const;
    });
  }

  async listEndpoints(merchantId: string): Promise<repo.EndpointRow[] | undefined> {
    if (!(await getMerchant(this.db, merchantId))) return undefined;
    return repo.listEndpoints(this.db, merchantId);
  }

  /** Disabling stops new deliveries and pauses pending ones (they resume when re-enabled). */
  async setEnabled(merchantId: string, endpointId: string, enabled: boolean): Promise<{ kind: 'ok'; endpoint: repo.EndpointRow } | { kind: 'not_found' } | { kind: 'limit' }> {
    return this.db.transaction(async (tx) => {
      if (!(await lockMerchant(tx, merchantId))) return { kind: 'not_found' } as const;
      const ep = await repo.lockEndpoint(tx, merchantId, endpointId);
      if (!ep) return { kind: 'not_found' } as const;
      if (ep.enabled === enabled) return { kind: 'ok', endpoint: ep } as const;
      if (enabled && (await repo.countEnabledEndpoints(tx, merchantId)) >= MAX_ENABLED_ENDPOINTS) return { kind: 'limit' } as const;
      return { kind: 'ok', endpoint: await repo.setEndpointEnabled(tx, endpointId, enabled, this.now()) } as const;
    });
  }

  /**
   * A new secret, shown once. For `overlapSeconds` the old one keeps signing (see signing.ts for
   * which header carries which); 0 switches at once. A rotation during an overlap drops the
   * oldest secret: only the two newest are ever live.
   */
  async rotateSecret(merchantId: string, endpointId: string, overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<{ kind: 'rotated'; endpoint: repo.EndpointRow; secret: string } | { kind: 'not_found' }> {
    const secret = generateWebhookSecret();
    return this.db.transaction(async (tx) => {
      const ep = await repo.lockEndpoint(tx, merchantId, endpointId);
      if (!ep) return { kind: 'not_found' } as const;
      const now = this.now();
      const endpoint = await repo.rotateEndpointSecret(tx, endpointId, {
        ciphertext: encryptSecret(this.config.masterKey, secret, endpointId),
        previousCiphertext: overlapSeconds > 0 ? ep.secret_ciphertext : null,
        previousUntil: overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null,
        now,
      });
      return { kind: 'rotated', endpoint, secret } as const;
    });
  }

  /** Emits a realistic test event (`test: true`) through the outbox, like a real state change. */
  async trigger(merchantId: string, event: WebhookEventName): Promise<{ kind: 'emitted'; eventId: string; deliveries: number } | { kind: 'merchant_not_found' }> {
    return this.db.transaction(async (tx) => {
      if (!(await getMerchant(tx, merchantId))) return { kind: 'merchant_not_found' } as const;
      const now = this.now();
      const wallet = (await listWallets(tx, merchantId))[0]?.address;
      const { payload, orderId } = samplePayload(event, { merchantId, config: this.config, wallet, now });
      const out = await emitEvent(tx, { merchantId, event, payload, orderId, clockNow: now, test: true });
      return { kind: 'emitted', ...out } as const;
    });
  }

  async listDeliveries(merchantId: string, filter: dq.DeliveryFilter): Promise<DeliveryWithAttempts[] | undefined> {
    if (!(await getMerchant(this.db, merchantId))) return undefined;
    const rows = await dq.listDeliveries(this.db, merchantId, filter);
    const attempts = await dq.listAttempts(
      this.db,
      rows.map((r) => r.id),
    );
    const byDelivery = new Map<string, dq.AttemptRow[]>();
    for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
    return rows.map((r) => ({ ...r, attempts: byDelivery.get(r.id) ?? [] }));
  }

  /**
   * Redelivers one delivery. Delivered or dead: a NEW pending row with a fresh schedule
   * (`redelivery_of` → the old one), so the history of the old row and its attempts stays intact
   * and the receiver sees the same event id. Failing: its next attempt moves to now. Pending or in
   * flight: already on its way.
   */
  async redeliver(merchantId: string, deliveryId: string): Promise<RedeliverOutcome> {
    const out = await this.db.transaction(async (tx): Promise<RedeliverOutcome | { kind: 'new'; id: string } | { kind: 'requeued_id'; id: string }> => {
      const d = await dq.lockDelivery(tx, merchantId, deliveryId);
      if (!d) return { kind: 'not_found' };
      if (!d.endpoint_enabled) return { kind: 'endpoint_disabled' };
      const now = this.now();
      if (d.status === 'delivered' || d.status === 'dead') {
        const id = newId('whd');
        await dq.insertRedeliveries(tx, [{ newId: id, of: d.id }], now);
        return { kind: 'new', id };
      }
      const requeued = await dq.requeueFailed(tx, { merchantId, now, ids: [d.id] });
      return requeued.length > 0 ? { kind: 'requeued_id', id: d.id } : { kind: 'already_queued', delivery: d };
    });
    if (out.kind === 'new') return { kind: 'redelivered', delivery: (await dq.getDelivery(this.db, out.id))! };
    if (out.kind === 'requeued_id') return { kind: 'requeued', delivery: (await dq.getDelivery(this.db, out.id))! };
    return out;
  }

  /**
   * Redelivers every failed (retry now) and/or dead (new delivery row) delivery created since
   * `since`, on enabled endpoints. A dead delivery already redelivered is skipped, so running the
   * same command twice does not send twice.
   */
  async redeliverSince(merchantId: string, since: Date, status?: 'failed' | 'dead'): Promise<{ requeued: number; redelivered: number; more: boolean } | undefined> {
    if (!(await getMerchant(this.db, merchantId))) return undefined;
    const now = this.now();
    const requeued = status === 'dead' ? [] : await dq.requeueFailed(this.db, { merchantId, now, since });
    if (status === 'failed') return { requeued: requeued.length, redelivered: 0, more: false };
    return this.db.transaction(async (tx) => {
      const dead = await dq.listRedeliverableDead(tx, merchantId, since, MAX_BULK_REDELIVERIES);
      await dq.insertRedeliveries(
        tx,
        dead.map((of) => ({ newId: newId('whd'), of })),
        now,
      );
      return { requeued: requeued.length, redelivered: dead.length, more: dead.length === MAX_BULK_REDELIVERIES };
    });
  }

  /**
   * The merchant's event feed after a cursor (`tollgate listen`): long-polls up to `waitSeconds`
   * for new events. `after: 'now'` starts at the newest event. Returns the events and the cursor
   * to pass next time.
   */
  async listEvents(
    merchantId: string,
    q: { after?: string | undefined; limit: number; waitSeconds: number; cancelled?: () => boolean },
  ): Promise<{ kind: 'ok'; events: repo.EventRow[]; nextAfter: string | null } | { kind: 'merchant_not_found' } | { kind: 'cursor_not_found' }> {
    if (!(await getMerchant(this.db, merchantId))) return { kind: 'merchant_not_found' };
    let after = q.after;
    if (after === 'now') after = await repo.latestEventId(this.db, merchantId);
    else if (after !== undefined && !(await repo.eventExists(this.db, merchantId, after))) return { kind: 'cursor_not_found' };
    // Real time, not deps.clock: this is how long an HTTP request waits, not business time.
    const deadline = Date.now() + q.waitSeconds * 1000;
    for (;;) {
      const events = await repo.listEventsAfter(this.db, merchantId, after, q.limit);
      const left = deadline - Date.now();
      if (events.length > 0 || left <= 0 || q.cancelled?.()) return { kind: 'ok', events, nextAfter: events.at(-1)?.id ?? after ?? null };
      await new Promise((r) => setTimeout(r, Math.min(200, left)));
    }
  }
}

/** What the webhook service is built from (routes pass the composition root's deps). */
interface WebhookContext {
  db: Database;
  config: Config;
  clock: Clock;
}

const services = new WeakMap<WebhookContext, WebhookService>();

/** The service of this context, one per context object (the composition root's deps: one per gateway). */
export function webhookService(deps: WebhookContext): WebhookService {
  let s = services.get(deps);
  if (!s) services.set(deps, (s = new WebhookService(deps.db, deps.config, deps.clock)));
  return s;
}
