import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../src/config/schema.ts';
import { startTollgate } from '../../src/main.ts';
import { dispatchOnce, type DispatcherOptions, type DispatchSummary } from '../../src/webhooks/dispatcher.ts';
import { openTestDatabase, type Backend } from '../helpers/db.ts';
import { buildConfig, fakeChain, TestClock, TestServer, type Creds } from '../helpers/server.ts';

/**
 * A Tollgate with the API only (no workers): webhook tests drive the dispatcher themselves with
 * `dispatch()` and move time with the TestClock, so nothing is sent behind their back.
 */
export async function startApiOnly(backend: Backend, config: Partial<Config> = {}): Promise<TestServer> {
  const database = await openTestDatabase(backend);
  const clock = new TestClock();
  try {
    const tg = await startTollgate(buildConfig({ chains: [fakeChain()], ...config }), { db: database.db, clock, http: { logger: false }, role: 'api' });
    return new TestServer(tg, database, clock);
  } catch (err) {
    await database.drop();
    throw err;
  }
}

/** One dispatcher round with test-friendly defaults (small timeout, no jitter). */
export function dispatch(s: TestServer, opts: DispatcherOptions = {}): Promise<DispatchSummary> {
  return dispatchOnce(s.tg.deps, { timeoutMs: 500, random: () => 0.5, ...opts });
}

/**
 * Order transitions stamp their events with the wall clock (transitionOrder has no Clock yet), so
 * a TestClock left behind real time would see them as not yet due. Call before dispatching
 * events that came from an order transition.
 */
export function catchUpClock(s: TestServer): void {
  s.clock.ms = Math.max(s.clock.ms, Date.now() + 1);
}

export interface Received {
  /** path and query string */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Reply = { status: number; body?: string } | 'hang' | 'destroy';

/** A real HTTP receiver on 127.0.0.1:0 that records every request and answers as told. */
export class Receiver {
  readonly received: Received[] = [];
  reply: (r: Received) => Reply = () => ({ status: 200, body: 'ok' });
  private readonly hung = new Set<http.ServerResponse>();
  readonly server: http.Server;

  private constructor(server: http.Server) {
    this.server = server;
  }

  static async start(port = 0): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => self!.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    self = new Receiver(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    return self;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const r: Received = { url: req.url ?? '', headers: req.headers, body, at: Date.now() };
    this.received.push(r);
    const out = this.reply(r);
    if (out === 'hang') return void this.hung.add(res);
    if (out === 'destroy') return void req.socket.destroy();
    res.writeHead(out.status, { 'content-type': 'text/plain' });
    res.end(out.body ?? '');
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks`;
  }

  /** Parsed envelopes of everything received so far. */
  envelopes(): { id: string; event: string; payload: Record<string, any>; created_at: string }[] {
    return this.received.map((r) => JSON.parse(r.body));
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Creates an endpoint through the admin API; returns its id and secret. */
export async function createEndpoint(s: TestServer, m: Creds, url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks`, { url, events });
  if (r.status !== 201) throw new Error(`create endpoint: ${r.status} ${r.text}`);
  return { id: r.body.webhook_id, secret: r.body.secret };
}

/** Emits a test event through the admin trigger route. */
export async function trigger(s: TestServer, m: Creds, event: string): Promise<string> {
  const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/trigger`, { event });
  if (r.status !== 201) throw new Error(`trigger: ${r.status} ${r.text}`);
  return r.body.event_id;
}

export async function deliveries(s: TestServer, m: Creds, query: Record<string, string> = {}): Promise<any[]> {
  const qs = new URLSearchParams(query).toString();
  const r = await s.admin('GET', `/admin/v1/merchants/${m.merchantId}/webhook-deliveries${qs ? `?${qs}` : ''}`);
  if (r.status !== 200) throw new Error(`deliveries: ${r.status} ${r.text}`);
  return r.body.deliveries;
}
