import { Type } from '@sinclair/typebox';
import { WEBHOOK_EVENTS } from '@tollgate/protocol';
import { DELIVERY_STATUSES, type AttemptRow } from '../deliveries-repo.ts';
import type { EndpointRow, EventRow } from '../repo.ts';
import type { DeliveryWithAttempts } from '../service.ts';

/** Wire schemas and row → view mappers of the webhook admin routes. Never a secret in a view. */
export const EventNameSchema = Type.Union(
  WEBHOOK_EVENTS.map((e) => Type.Literal(e)),
  { description: 'webhook event name' },
);
export const DeliveryStatusSchema = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)));

export const MerchantIdParams = Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const WebhookIdParams = Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }), webhook_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const DeliveryIdParams = Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }), delivery_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** Query strings arrive as strings (ajv does not coerce here): integers are parsed by the route. */
export const IntString = (max: number) => Type.String({ pattern: `^[0-9]{1,${String(max).length}}$`, description: `integer, at most ${max}` });

export const EndpointSchema = Type.Object({
  webhook_id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
  previous_secret_expires_at: Type.Optional(Type.String({ description: 'while a rotation overlap lasts: when the previous secret stops signing' })),
});

const iso = (d: Date) => d.toISOString();

export function endpointView(e: EndpointRow, nowMs: number) {
  const overlap = e.previous_secret_ciphertext !== null && e.previous_secret_expires_at !== null && e.previous_secret_expires_at.getTime() > nowMs;
  return {
    webhook_id: e.id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
    ...(overlap ? { previous_secret_expires_at: iso(e.previous_secret_expires_at!) } : {}),
  };
}

const AttemptSchema = Type.Object({
  attempt: Type.Integer(),
  attempted_at: Type.String(),
  status_code: Type.Optional(Type.Integer()),
  latency_ms: Type.Integer(),
  error: Type.Optional(Type.String()),
  refused: Type.Boolean({ description: 'the receiver answered 4xx (not 408/429): it refused the delivery' }),
  response_body: Type.Optional(Type.String({ description: 'first 1 KiB of the response body' })),
});

export const DeliverySchema = Type.Object({
  delivery_id: Type.String(),
  event_id: Type.String(),
  event: Type.String(),
  order_id: Type.Optional(Type.String()),
  webhook_id: Type.String(),
  url: Type.String(),
  status: DeliveryStatusSchema,
  attempt_count: Type.Integer(),
  next_attempt_at: Type.Optional(Type.String()),
  last_status_code: Type.Optional(Type.Integer()),
  last_error: Type.Optional(Type.String()),
  delivered_at: Type.Optional(Type.String()),
  redelivery_of: Type.Optional(Type.String()),
  created_at: Type.String(),
  attempts: Type.Optional(Type.Array(AttemptSchema)),
});

const opt = <K extends string, V>(k: K, v: V | null | undefined) => (v === null || v === undefined ? {} : ({ [k]: v } as Record<K, V>));

function attemptView(a: AttemptRow) {
  return {
    attempt: a.attempt,
    attempted_at: iso(a.attempted_at),
    ...opt('status_code', a.status_code),
    latency_ms: a.latency_ms,
    ...opt('error', a.error),
    refused: a.refused,
    ...opt('response_body', a.response_body),
  };
}

export function deliveryView(d: Omit<DeliveryWithAttempts, 'attempts'> & { attempts?: AttemptRow[] }) {
  return {
    delivery_id: d.id,
    event_id: d.event_id,
    event: d.event,
    ...opt('order_id', d.order_id),
    webhook_id: d.endpoint_id,
    url: d.url,
    status: d.status,
    attempt_count: d.attempt_count,
    ...opt('next_attempt_at', d.next_attempt_at && iso(d.next_attempt_at)),
    ...opt('last_status_code', d.last_status_code),
    ...opt('last_error', d.last_error),
    ...opt('delivered_at', d.delivered_at && iso(d.delivered_at)),
    ...opt('redelivery_of', d.redelivery_of),
    created_at: iso(d.created_at),
    ...(d.attempts ? { attempts: d.attempts.map(attemptView) } : {}),
  };
}

export const EventSchema = Type.Object({
  id: Type.String(),
  event: Type.String(),
  payload: Type.Unknown(),
  order_id: Type.Optional(Type.String()),
  test: Type.Boolean({ description: 'emitted by `tollgate trigger`, not by a real state change' }),
  created_at: Type.String(),
});

export function eventView(e: EventRow) {
  return { id: e.id, event: e.event, payload: e.payload, ...opt('order_id', e.order_id), test: e.test, created_at: iso(e.created_at) };
}
