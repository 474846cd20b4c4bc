import { parseArgs } from 'node:util';
import { generateWebhookSecret, isWebhookEvent, webhookDeliveryHeaders, WEBHOOK_EVENTS, type WebhookEventName } from '@tollgate/protocol';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';

/** The webhook commands of `tollgate` (thin clients of the admin API, like the merchant ones). */
export const WEBHOOK_COMMANDS = ['webhook', 'deliveries', 'listen', 'trigger'];

export const WEBHOOK_USAGE = `  webhook create ID --url URL --events EVENT[,EVENT…]   (secret shown once)
  webhook list ID
  webhook disable|enable ID WEBHOOK_ID
  webhook rotate ID WEBHOOK_ID [--overlap SECONDS]      (default 86400; the old secret signs meanwhile)
  deliveries list ID [--event EVENT] [--order ORDER_ID] [--status pending|failed|delivered|dead] [--limit N]
  deliveries redeliver ID DELIVERY_ID
  deliveries redeliver ID --since RFC3339 [--status failed|dead]
  listen --merchant ID --forward-to URL [--events EVENT,…]   (forward live events to a local URL, signed)
  trigger EVENT --merchant ID                            (emit a test event to the merchant's endpoints)

  Events: ${WEBHOOK_EVENTS.join(', ')}`;

const enc = encodeURIComponent;

export async function runWebhookCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      url: { type: 'string' },
      events: { type: 'string' },
      overlap: { type: 'string' },
      event: { type: 'string' },
      order: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
      since: { type: 'string' },
      merchant: { type: 'string' },
      'forward-to': { type: 'string' },
    },
  });
  const [cmd, sub, ...rest] = pos;
  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\nusage:\n${WEBHOOK_USAGE}`);
    return v;
  };
  const base = (id: string | undefined) => `/admin/v1/merchants/${enc(need(id, 'merchant ID'))}`;

  switch (cmd) {
    case 'listen':
      return listen(api, need(o.merchant, '--merchant'), need(o['forward-to'], '--forward-to'), o.events ? parseEvents(o.events) : undefined);
    case 'trigger': {
      const event = need(sub, 'event name');
      if (!isWebhookEvent(event)) throw new CliError(`unknown event ${event}; one of ${WEBHOOK_EVENTS.join(', ')}`);
      const out = (await api.call('POST', `${base(o.merchant)}/webhooks/trigger`, { event })) as { event_id: string; deliveries: number };
      if (o.json) return print(out, true);
      return void console.log(`Triggered ${event} (${out.event_id}, test data): queued for ${out.deliveries} endpoint(s).`);
    }
    case 'webhook':
      print(await webhookCommand(api, sub, rest, o, base, need), o.json!);
      if (!o.json && (sub === 'create' || sub === 'rotate')) console.log('\nThe webhook secret is shown only once: store it now.');
      return;
    case 'deliveries':
      return print(await deliveriesCommand(api, sub, rest, o, base, need), o.json!);
    default:
      throw new CliError(`unknown command ${cmd}`);
  }
}

type Opts = Record<string, string | boolean | undefined>;
type Need = (v: string | undefined, what: string) => string;

async function webhookCommand(api: AdminClient, sub: string | undefined, rest: string[], o: Opts, base: (id?: string) => string, need: Need): Promise<unknown> {
  const hook = () => `${base(rest[0])}/webhooks/${enc(need(rest[1], 'webhook ID'))}`;
  switch (sub) {
    case 'create':
      return api.call('POST', `${base(rest[0])}/webhooks`, { url: need(o.url as string, '--url'), events: parseEvents(need(o.events as string, '--events')) });
    case 'list':
      return api.call('GET', `${base(rest[0])}/webhooks`);
    case 'disable':
    case 'enable':
      return api.call('POST', `${hook()}/${sub}`);
    case 'rotate': {
      const overlap = o.overlap === undefined ? undefined : Number(o.overlap);
      if (overlap !== undefined && !Number.isInteger(overlap)) throw new CliError('--overlap must be an integer number of seconds');
      return api.call('POST', `${hook()}/rotate-secret`, overlap === undefined ? {} : { overlap_seconds: overlap });
    }
    default:
      throw new CliError(`unknown webhook command ${sub ?? ''}\n\nusage:\n${WEBHOOK_USAGE}`);
  }
}

async function deliveriesCommand(api: AdminClient, sub: string | undefined, rest: string[], o: Opts, base: (id?: string) => string, need: Need): Promise<unknown> {
  switch (sub) {
    case 'list': {
      const q = new URLSearchParams();
      if (o.event) q.set('event', o.event as string);
      if (o.order) q.set('order_id', o.order as string);
      if (o.status) q.set('status', o.status as string);
      if (o.limit) q.set('limit', o.limit as string);
      const qs = q.size ? `?${q}` : '';
      return api.call('GET', `${base(rest[0])}/webhook-deliveries${qs}`);
    }
    case 'redeliver':
      if (o.since) return api.call('POST', `${base(rest[0])}/webhook-deliveries/redeliver`, { since: o.since, ...(o.status ? { status: o.status } : {}) });
      return api.call('POST', `${base(rest[0])}/webhook-deliveries/${enc(need(rest[1], 'delivery ID (or --since)'))}/redeliver`);
    default:
      throw new CliError(`unknown deliveries command ${sub ?? ''}\n\nusage:\n${WEBHOOK_USAGE}`);
  }
}

function parseEvents(s: string): WebhookEventName[] {
  const list = s
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const e of list) if (!isWebhookEvent(e)) throw new CliError(`unknown event ${e}; one of ${WEBHOOK_EVENTS.join(', ')}`);
  return list as WebhookEventName[];
}

interface FeedEvent {
  id: string;
  event: WebhookEventName;
  payload: unknown;
}

/**
 * `tollgate listen`: forwards the merchant's events to a local URL, signed exactly like real
 * deliveries but with a secret minted for this session (no public endpoint needed, nothing
 * registered on the server). Long-polls the admin event feed; survives Tollgate restarts.
 */
async function listen(api: AdminClient, merchantId: string, forwardTo: string, only: WebhookEventName[] | undefined): Promise<void> {
  try {
    new URL(forwardTo);
  } catch {
    throw new CliError(`--forward-to must be an absolute URL, got ${forwardTo}`);
  }
  const secret = generateWebhookSecret();
  // Fix the starting point before saying "Ready": every event after this line is forwarded.
  const start = (await api.call('GET', `/admin/v1/merchants/${enc(merchantId)}/events?after=now&limit=1`)) as { next_after: string | null };
  let after = start.next_after;
  console.log(`Ready! Forwarding events of merchant ${merchantId} to ${forwardTo}`);
  console.log(`Your webhook signing secret for this session is ${secret}`);
  console.log('(^C to quit)\n');
  for (;;) {
    let page: { events: FeedEvent[]; next_after: string | null };
    try {
      const qs = new URLSearchParams({ wait: '25', ...(after ? { after } : {}) });
      page = (await api.call('GET', `/admin/v1/merchants/${enc(merchantId)}/events?${qs}`)) as typeof page;
    } catch (err) {
      if (err instanceof CliError && /^4\d\d /.test(err.message)) throw err; // wrong merchant, token…: give up
      console.error(`tollgate: ${(err as Error).message}; retrying in 2 s`);
      await new Promise((r) => setTimeout(r, 2000));
      continue;
    }
    for (const ev of page.events) {
      if (only && !only.includes(ev.event)) continue;
      console.log(`${new Date().toISOString()}  ${ev.event.padEnd(28)} ${ev.id}  → ${await forward(forwardTo, secret, ev)}`);
    }
    after = page.next_after;
  }
}

async function forward(url: string, secret: string, ev: FeedEvent): Promise<string> {
  const body = JSON.stringify({ id: ev.id, event: ev.event, payload: ev.payload, created_at: new Date().toISOString() });
  const headers = webhookDeliveryHeaders({ secret, event: ev.event, id: ev.id, timestamp: Math.floor(Date.now() / 1000), rawBody: body });
  const started = performance.now();
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return `${res.status} (${Math.round(performance.now() - started)} ms)`;
  } catch (err) {
    return `error: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`;
  }
}
