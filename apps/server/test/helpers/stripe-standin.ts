// A local stand-in for the parts of the Stripe API the card rail's adapter calls, on loopback HTTP.
// Stripe itself is unreachable from the test machines; the official `stripe` client runs unchanged
// against this server (its `host`/`port`/`protocol` options), and notifications are signed with the
// library's own `stripe.webhooks.generateTestHeaderString`. Payloads follow Stripe's published
// object shapes (Checkout Session, PaymentIntent, Refund, Dispute, Event, list envelopes) for the
// fields the adapter reads, plus the usual envelope fields.
//
// Emulated: POST /v1/checkout/sessions, GET /v1/checkout/sessions/:id, POST /v1/refunds,
// GET /v1/events (limit, starting_after, ending_before, types[], created[gte]); Idempotency-Key
// replay (same key + same request → the stored answer with `Idempotent-Replayed: true`; same key +
// another request → 400 idempotency_error); injected lost answers (the request is processed, the
// answer is a 500 with `Stripe-Should-Retry: true`, as after a network failure).
// The hosted payment page is emulated only as far as a payer's browser needs it: GET /pay/:id shows
// the amount with "Pay" and "Cancel" buttons; "Pay" pays the session (`pay()`), answers with a 303
// to its success_url and then delivers the resulting events, signed, to `notifyUrl` (after
// `notifyDelayMs`, as Stripe's notification trails the redirect); "Cancel" is a 303 to cancel_url.
// Not emulated (docs/card-stripe.md): the card entry of that page, 3-D Secure, API versions,
// authentication beyond "a Bearer sk_ key is present", pagination limits > 100, rate limits,
// Connect, expansion (`expand[]`), webhook retries on Stripe's side.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import Stripe from 'stripe';

export interface StandInRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  body: Record<string, any>;
}

type Obj = Record<string, any>;

const rid = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** `a[b][0][c]=1` form bodies (stripe-node's encoding) → nested objects (arrays stay keyed objects). */
function parseStripeForm(body: string): Obj {
  const out: Obj = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const path = k.replace(/\]/g, '').split('[');
    let cur = out;
    path.forEach((p, i) => {
      if (i === path.length - 1) cur[p] = v;
      else cur = cur[p] ??= {};
    });
  }
  return out;
}

export class StripeStandIn {
  readonly requests: StandInRequest[] = [];
  readonly sessions = new Map<string, Obj>();
  readonly intents = new Map<string, Obj>();
  readonly refunds = new Map<string, Obj>();
  /** newest last */
  readonly events: Obj[] = [];
  /** answers to lose (process the request, answer 500 + Stripe-Should-Retry), per path prefix */
  readonly loseAnswers = new Map<string, number>();
  private readonly idem = new Map<string, { fingerprint: string; status: number; body: string }>();
  /** where the hosted page's payments are notified (Tollgate's /card/v1/notifications/stripe) */
  notifyUrl: string | undefined;
  notifyDelayMs = 500;
  /** when set, the notifications also wait for it (a test holds them until the payer's page is seen waiting) */
  notifyAfter: Promise<unknown> | undefined;
  /** answers to the hosted page's notifications: [event type, HTTP status] */
  readonly notified: [string, number][] = [];
  private server!: http.Server;
  private clock = Math.floor(Date.now() / 1000);
  url = '';
  port = 0;
  private readonly webhookSecret: string;

  constructor(webhookSecret: string) {
    this.webhookSecret = webhookSecret;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
  }

  /** Event times strictly increase (ordering in lists and reconciliation is by `created`). */
  private tick(): number {
    this.clock = Math.max(this.clock + 1, Math.floor(Date.now() / 1000));
    return this.clock;
  }

  private handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', this.url);
    const key = req.headers['idempotency-key'] as string | undefined;
    const body = req.method === 'POST' ? parseStripeForm(raw) : parseStripeForm(url.search.slice(1));
    this.requests.push({ method: req.method ?? '', path: url.pathname, idempotencyKey: key, body });
    const page = /^\/pay\/(cs_test_[0-9a-f]+)$/.exec(url.pathname);
    if (page) return this.hostedPage(req.method ?? '', page[1]!, body, res);
    const send = (status: number, obj: unknown, extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': rid('req'), ...extra });
      res.end(JSON.stringify(obj));
    };
    if (!/^Bearer (sk|rk)_/.test(req.headers.authorization ?? '')) return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    const fingerprint = `${req.method} ${url.pathname} ${raw}`;
    if (req.method === 'POST' && key) {
      const prior = this.idem.get(key);
      if (prior && prior.fingerprint !== fingerprint) {
        return send(400, { error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' } });
      }
      if (prior) {
        res.writeHead(prior.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
        return res.end(prior.body);
      }
    }
    let status = 200;
    let answer: unknown;
    try {
      answer = this.route(req.method ?? '', url.pathname, body);
      if (answer === undefined) {
        status = 404;
        answer = { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${url.pathname})` } };
      }
    } catch (err) {
      status = 400;
      answer = { error: { type: 'invalid_request_error', message: (err as Error).message } };
    }
    if (req.method === 'POST' && key) this.idem.set(key, { fingerprint, status, body: JSON.stringify(answer) });
    for (const [prefix, n] of this.loseAnswers) {
      if (url.pathname.startsWith(prefix) && n > 0) {
        this.loseAnswers.set(prefix, n - 1);
        return send(500, { error: { type: 'api_error', message: 'answer lost (stand-in fault injection)' } }, { 'stripe-should-retry': 'true' });
      }
    }
    send(status, answer);
  }

  private route(method: string, path: string, b: Obj): unknown {
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const li = b.line_items?.['0'];
      const amount = Number(li?.price_data?.unit_amount) * Number(li?.quantity ?? 1);
      if (!Number.isInteger(amount) || amount <= 0) throw new Error('line_items[0][price_data][unit_amount] is required');
      const id = rid('cs_test');
      const s = {
        id,
        object: 'checkout.session',
        mode: b.mode,
        status: 'open',
        payment_status: 'unpaid',
        livemode: false,
        amount_total: amount,
        currency: li.price_data.currency,
        client_reference_id: b.client_reference_id ?? null,
        metadata: b.metadata ?? {},
        payment_intent: null,
        success_url: b.success_url,
        cancel_url: b.cancel_url,
        url: `${this.url}/pay/${id}`,
        created: this.tick(),
        expires_at: this.expiresAt(b.expires_at),
        // kept for the simulated payment (Stripe copies payment_intent_data.metadata to the PaymentIntent)
        _pi_metadata: b.payment_intent_data?.metadata ?? {},
      };
      this.sessions.set(id, s);
      return this.publicSession(s);
    }
    const sm = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === 'GET' && sm) {
      const s = this.sessions.get(sm[1]!);
      return s && this.publicSession(s);
    }
    if (method === 'POST' && path === '/v1/refunds') {
      const pi = this.intents.get(b.payment_intent);
      if (pi?.status !== 'succeeded') throw new Error(`No such payment_intent: '${b.payment_intent}'`);
      const amount = b.amount ? Number(b.amount) : pi.amount_received;
      const refunded = [...this.refunds.values()].filter((r) => r.payment_intent === pi.id && r.status !== 'failed').reduce((t, r) => t + r.amount, 0);
      if (refunded + amount > pi.amount_received) throw new Error('Refund amount is greater than unrefunded amount on charge');
      const r = { id: rid('re'), object: 'refund', amount, currency: pi.currency, payment_intent: pi.id, charge: pi.latest_charge, status: 'succeeded', metadata: b.metadata ?? {}, created: this.tick() };
      this.refunds.set(r.id, r);
      this.emit('refund.created', r);
      return r;
    }
    if (method === 'GET' && path === '/v1/events') return this.listEvents(b);
    return undefined;
  }

  /** Stripe's rule for Checkout Sessions: expires_at 30 minutes to 24 hours from now (default 24 h). */
  private expiresAt(raw: unknown): number {
    const now = Math.floor(Date.now() / 1000);
    if (raw === undefined) return now + 86_400;
    const at = Number(raw);
    if (!Number.isInteger(at) || at < now + 1800 || at > now + 86_400) throw new Error('The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.');
    return at;
  }

  /** The payer's side of the hosted page (see the header). */
  private hostedPage(method: string, id: string, form: Obj, res: http.ServerResponse) {
    const s = this.sessions.get(id);
    if (!s) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('no such Checkout Session');
    }
    if (method === 'GET') {
      const done = s.status === 'complete';
      const amount = `${(s.amount_total / 100).toFixed(2)} ${String(s.currency).toUpperCase()}`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Stripe stand-in checkout</title></head><body><main>` +
          `<h1>Pay ${amount}</h1>` +
          (done ? '<p id="done">This payment is complete.</p>' : `<form method="post"><button name="action" value="pay">Pay ${amount}</button> <button name="action" value="cancel">Cancel</button></form>`) +
          '</main></body></html>',
      );
    }
    if (method !== 'POST' || s.status !== 'open') {
      res.writeHead(409, { 'content-type': 'text/plain' });
      return res.end('this Checkout Session is not open');
    }
    if (form.action === 'cancel') {
      res.writeHead(303, { location: s.cancel_url });
      return res.end();
    }
    const events = this.pay(id);
    res.writeHead(303, { location: s.success_url });
    res.end();
    const url = this.notifyUrl;
    if (url) {
      setTimeout(() => {
        void (async () => {
          await this.notifyAfter;
          for (const e of events) this.notified.push([e.type, (await this.deliver(url, e).catch(() => ({ status: 0 }))).status]);
        })();
      }, this.notifyDelayMs);
    }
  }

  private publicSession(s: Obj): Obj {
    const { _pi_metadata: _omit, ...pub } = s;
    return pub;
  }

  private listEvents(q: Obj): Obj {
    const limit = Math.min(Number(q.limit ?? 10), 100);
    const types: string[] | undefined = q.types ? Object.values(q.types) : undefined;
    const gte = q.created?.gte !== undefined ? Number(q.created.gte) : undefined;
    const all = this.events
      .filter((e) => (!types || types.includes(e.type)) && (gte === undefined || e.created >= gte))
      .slice()
      .reverse(); // newest first
    let page: Obj[];
    let hasMore: boolean;
    if (q.ending_before) {
      const i = all.findIndex((e) => e.id === q.ending_before);
      const newer = i < 0 ? all : all.slice(0, i);
      page = newer.slice(Math.max(0, newer.length - limit));
      hasMore = newer.length > limit;
    } else {
      const i = q.starting_after ? all.findIndex((e) => e.id === q.starting_after) : -1;
      const older = all.slice(i + 1);
      page = older.slice(0, limit);
      hasMore = older.length > limit;
    }
    return { object: 'list', url: '/v1/events', has_more: hasMore, data: page };
  }

  /** Records an event (Stripe's Event shape) and returns it. */
  emit(type: string, object: Obj): Obj {
    const { _pi_metadata: _omit, ...data } = object;
    const e = { id: rid('evt'), object: 'event', api_version: '2025-01-01', created: this.tick(), livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type, data: { object: structuredClone(data) } };
    this.events.push(e);
    return e;
  }

  /**
   * The payer pays a Checkout Session on Stripe's page: a PaymentIntent is created and succeeds
   * (or fails); returns the events Stripe would send, in Stripe's order.
   */
  pay(sessionId: string, outcome: 'succeeded' | 'failed' = 'succeeded', opts: { amount?: number } = {}): Obj[] {
    const s = this.sessions.get(sessionId);
    if (!s) throw new Error(`no session ${sessionId}`);
    const amount = opts.amount ?? s.amount_total;
    const pi: Obj = {
      id: rid('pi'),
      object: 'payment_intent',
      amount,
      amount_received: outcome === 'succeeded' ? amount : 0,
      currency: s.currency,
      status: outcome === 'succeeded' ? 'succeeded' : 'requires_payment_method',
      metadata: s._pi_metadata,
      latest_charge: rid('ch'),
      last_payment_error: outcome === 'failed' ? { code: 'card_declined', decline_code: 'generic_decline', type: 'card_error' } : null,
      created: this.tick(),
      livemode: false,
    };
    this.intents.set(pi.id, pi);
    if (outcome === 'failed') return [this.emit('payment_intent.payment_failed', pi)];
    Object.assign(s, { status: 'complete', payment_status: 'paid', payment_intent: pi.id });
    return [this.emit('checkout.session.completed', s), this.emit('payment_intent.succeeded', pi)];
  }

  /** A dispute on the PaymentIntent's charge: `created`, then `won` or `lost`. */
  dispute(piId: string, step: 'created' | 'won' | 'lost'): Obj {
    const pi = this.intents.get(piId)!;
    const d = {
      id: `dp_${piId.slice(3, 15)}`,
      object: 'dispute',
      amount: pi.amount_received,
      currency: pi.currency,
      charge: pi.latest_charge,
      payment_intent: pi.id,
      reason: 'fraudulent',
      status: step === 'created' ? 'needs_response' : step,
      created: this.tick(),
    };
    return this.emit(step === 'created' ? 'charge.dispute.created' : 'charge.dispute.closed', d);
  }

  /** Delivers an event to `url` signed like Stripe (library test-header helper); options forge bad deliveries. */
  async deliver(url: string, event: Obj, opts: { secret?: string; timestamp?: number; tamper?: boolean; header?: string } = {}): Promise<{ status: number; body: any }> {
    const payload = JSON.stringify(event, null, 2);
    const header = opts.header ?? Stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? this.webhookSecret, ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}) });
    // Tampering flips one field after signing (a forged "live" event).
    const sent = opts.tamper ? payload.replace('"livemode": false', '"livemode": true') : payload;
    if (opts.tamper && sent === payload) throw new Error('nothing to tamper with');
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header }, body: sent });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  }
}
