import { randomBytes } from 'node:crypto';
import { signedHeaders } from '@tollgate/protocol';
import type { Config, ChainConfig } from '../../src/config/schema.ts';
import type { Clock } from '../../src/clock.ts';
import type { HttpOptions } from '../../src/http/app.ts';
import { startTollgate, type Role, type Tollgate } from '../../src/main.ts';
import { openTestDatabase, type Backend, type TestDatabase } from './db.ts';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A valid Config for tests; `overrides` replace top-level keys. */
export function buildConfig(overrides: Partial<Config> = {}): Config {
  return {
    profile: 'file',
    environment: 'test',
    port: 0,
    host: '127.0.0.1',
    databaseUrl: undefined,
    dataDir: '/nonexistent',
    adminToken: TEST_ADMIN_TOKEN,
    masterKey: randomBytes(32),
    publicBaseUrl: 'http://127.0.0.1:8402',
    logLevel: 'silent',
    orderTtlSeconds: 600,
    fees: { perOrderMicros: 10_000n },
    chains: [],
    ...overrides,
  };
}

/** A settable clock (ms). */
export class TestClock implements Clock {
  public ms: number;
  constructor(ms = Date.now()) {
    this.ms = ms;
  }
  now() {
    return this.ms;
  }
  advance(seconds: number) {
    this.ms += seconds * 1000;
  }
}

export interface Creds {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
}

export interface RequestOptions {
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A running Tollgate on loopback, on a fresh database, with request helpers. */
export class TestServer {
  readonly tg: Tollgate;
  readonly database: TestDatabase;
  readonly clock: TestClock;
  constructor(tg: Tollgate, database: TestDatabase, clock: TestClock) {
    this.tg = tg;
    this.database = database;
    this.clock = clock;
  }

  get url(): string {
    return this.tg.url!;
  }
  get db() {
    return this.database.db;
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions & { rawBody?: string } = {}): Promise<TestResponse<T>> {
    const qs = opts.query ? '?' + new URLSearchParams(opts.query).toString() : '';
    const hasBody = opts.rawBody !== undefined || opts.body !== undefined;
    const res = await fetch(this.url + path + qs, {
      method,
      headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      ...(hasBody ? { body: opts.rawBody ?? JSON.stringify(opts.body) } : {}),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body, text };
  }

  admin<T = any>(method: string, path: string, body?: unknown): Promise<TestResponse<T>> {
    return this.request<T>(method, path, { body, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
  }

  /** A merchant-HMAC request signed like the SDK does (fresh timestamp from the server's clock). */
  signed<T = any>(creds: Creds, method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
    const h = signedHeaders({
      apiKey: creds.apiKey,
      apiSecret: creds.apiSecret,
      query: opts.query,
      body: opts.body as Record<string, unknown> | undefined,
      now: () => this.clock.now(),
    });
    return this.request<T>(method, path, { ...opts, headers: { ...h, ...opts.headers } });
  }

  /** Creates a merchant through the admin API; optionally tops up its fee balance. */
  async createMerchant(opts: { name?: string; merchantId?: string; topUp?: string; body?: Record<string, unknown> } = {}): Promise<Creds> {
    const r = await this.admin('POST', '/admin/v1/merchants', {
      name: opts.name ?? 'Test Merchant',
      ...(opts.merchantId ? { merchant_id: opts.merchantId } : {}),
      ...opts.body,
    });
    if (r.status !== 201) throw new Error(`createMerchant: ${r.status} ${r.text}`);
    if (opts.topUp) {
      const t = await this.admin('POST', `/admin/v1/merchants/${r.body.merchant_id}/fee-balance/top-ups`, { amount: opts.topUp });
      if (t.status !== 200) throw new Error(`topUp: ${t.status} ${t.text}`);
    }
    return { merchantId: r.body.merchant_id, apiKey: r.body.api_key, apiSecret: r.body.api_secret };
  }

  async close() {
    await this.tg.close();
    await this.database.drop();
  }
}

/**
 * A Tollgate on a fresh database. `http` is merged over `{ logger: false }` (e.g. `rateLimits: false`
 * for a fuzzer); `role: 'api'` starts no workers, so nothing but requests writes to the database.
 */
export async function startTestServer(opts: { backend: Backend; config?: Partial<Config>; chains?: ChainConfig[]; clock?: TestClock; http?: HttpOptions; role?: Role } = { backend: 'pglite' }): Promise<TestServer> {
  const database = await openTestDatabase(opts.backend);
  const clock = opts.clock ?? new TestClock();
  const config = buildConfig({ ...opts.config, ...(opts.chains ? { chains: opts.chains } : {}) });
  try {
    const tg = await startTollgate(config, { db: database.db, clock, http: { logger: false, ...opts.http }, ...(opts.role ? { role: opts.role } : {}) });
    return new TestServer(tg, database, clock);
  } catch (err) {
    await database.drop();
    throw err;
  }
}

/** A fake single-chain config (no RPC is contacted by foundation routes). */
export function fakeChain(chainId = 31337): ChainConfig {
  return {
    chainId,
    name: 'Test',
    rpcUrl: 'http://127.0.0.1:1',
    confirmations: 1,
    finalityConfirmations: 2,
    pollIntervalMs: 200,
    tokens: [
      { symbol: 'USDC', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', decimals: 6 },
      { symbol: 'USDT', address: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512', decimals: 6 },
    ],
  };
}
