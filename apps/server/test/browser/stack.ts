// The full stack of the hosted-checkout browser tests: anvil with test tokens, a Tollgate listening
// on a port known before start (so PUBLIC_BASE_URL is its real URL and session `url`s open as-is),
// a merchant with return URLs and a webhook endpoint, a tiny "merchant site" and a webhook receiver,
// both plain node:http on loopback.
import http from 'node:http';
import type net from 'node:net';
import type { DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import type { Config } from '../../src/config/schema.ts';
import { startTollgate } from '../../src/main.ts';
import { openTestDatabase } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { buildConfig, TestClock, TestServer, type Creds } from '../helpers/server.ts';
import { chainConfigOf, startTestChain } from '../integration/watcher-fixtures.ts';
import { freePort } from '../helpers/net.ts';

/**
 * Real time plus a settable offset. The workers (webhook dispatcher, expiry sweeper) compare the
 * clock with wall-clock event stamps, so a frozen TestClock would never deliver a webhook here;
 * `skip(s)` moves the server into the future (the expired-session screen) and `reset()` back.
 */
export class LiveClock extends TestClock {
  offsetMs = 0;
  override now() {
    return Date.now() + this.offsetMs;
  }
  override advance(seconds: number) {
    this.offsetMs += seconds * 1000;
  }
  reset() {
    this.offsetMs = 0;
  }
}

export interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server recording every request and answering with `answer`. */
export async function recordingServer(answer: (h: Hit, res: http.ServerResponse) => void): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      hits.push(hit);
      answer(hit, res);
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const MERCHANT_PAGE = (title: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>` +
  `<body><main><h1>${title}</h1><p>Acme Coffee checks the payment with Tollgate before shipping.</p></main></body></html>`;

export interface Stack {
  dev: DevChain;
  server: TestServer;
  clock: LiveClock;
  creds: Creds;
  /** the merchant's site: /shop/success and /shop/cart */
  shop: Awaited<ReturnType<typeof recordingServer>>;
  /** the merchant's webhook receiver */
  hooks: Awaited<ReturnType<typeof recordingServer>>;
  webhookSecret: string;
  usdc: { address: Hex; decimals: number };
  /** An https logo URL: the test serves it through Playwright routing, never the network. */
  logoUrl: string;
  createSession(body?: Record<string, unknown>): Promise<{ checkout_id: string; url: string; expires_at: number }>;
  /**
   * Waits until no webhook delivery of the merchant is pending or due for a retry: every event
   * recorded so far has been answered by the receiver, so `hooks.hits` then holds all that was
   * sent. The "exactly once" checks wait on this, not on a sleep.
   */
  webhooksDelivered(): Promise<void>;
  close(): Promise<void>;
}

const LOGO_URL = 'https://logo.acme-coffee.test/logo.svg';
/** Never fetched: the tests only read the link's href. */
export const EXPLORER_URL = 'https://explorer.tollgate.test';
export const CHAIN_NAME = 'Anvil (local)';

/** `config`: deployment settings on top of the stack's (e.g. `card` for another card processor). */
export async function startStack(opts: { config?: Partial<Config> } = {}): Promise<Stack> {
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const dev = await startTestChain();
    cleanup.push(() => dev.stop());
    const shop = await recordingServer((h, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(MERCHANT_PAGE(h.url.startsWith('/shop/success') ? 'Thank you for your order' : 'Your cart'));
    });
    cleanup.push(() => shop.close());
    const hooks = await recordingServer((_h, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    cleanup.push(() => hooks.close());

    const clock = new LiveClock();
    const database = await openTestDatabase('pglite');
    let tgServer: TestServer | undefined;
    for (let attempt = 0; !tgServer; attempt++) {
      const port = await freePort();
      const config = buildConfig({
        port,
        publicBaseUrl: `http://127.0.0.1:${port}`,
        // Fast finality: a payment is confirmed at 1 and invoiced at 2 confirmations.
        // A named chain with an explorer: the page shows the name and links transactions there.
        chains: [chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 2, name: CHAIN_NAME, explorerUrl: EXPLORER_URL })],
        ...opts.config,
      });
      try {
        const tg = await startTollgate(config, { db: database.db, clock, http: { logger: false } });
        tgServer = new TestServer(tg, database, clock);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 3) {
          await database.drop();
          throw err;
        }
      }
    }
    const server = tgServer;
    cleanup.push(() => server.close());

    // The merchant: like helpers/orders.ts setupMerchant, plus a logo (the page shows it).
    const creds = await server.createMerchant({ name: 'Acme Coffee', topUp: '10.00', body: { logo_url: LOGO_URL } });
    for (const t of server.tg.deps.config.chains[0]!.tokens) {
      const r = await server.admin('POST', `/admin/v1/merchants/${creds.merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: t.symbol, address: MERCHANT_WALLET });
      if (r.status !== 201) throw new Error(`add wallet: ${r.status} ${r.text}`);
    }
    const ru = await server.admin('PUT', `/admin/v1/merchants/${creds.merchantId}/return-urls`, { return_urls: [`${shop.url}/shop`] });
    if (ru.status !== 200) throw new Error(`return urls: ${ru.status} ${ru.text}`);
    const wh = await server.admin('POST', `/admin/v1/merchants/${creds.merchantId}/webhooks`, { url: `${hooks.url}/hooks`, events: ['quickpay.checkout.completed', 'order.invoiced'] });
    if (wh.status !== 201) throw new Error(`webhook: ${wh.status} ${wh.text}`);

    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
    return {
      dev,
      server,
      clock,
      creds,
      shop,
      hooks,
      webhookSecret: wh.body.secret,
      usdc: { address: usdc.address.toLowerCase() as Hex, decimals: usdc.decimals },
      logoUrl: LOGO_URL,
      async createSession(body = {}) {
        const r = await server.signed(creds, 'POST', '/api/v1/checkout/sessions', {
          body: {
            checkout_type: 'DIRECT',
            price: '12.50',
            line_items_json: JSON.stringify([
              { name: 'Flat white', quantity: 2, amount: '4.50' },
              { name: 'Almond croissant', quantity: 1, amount: '3.50' },
            ]),
            public_metadata_json: JSON.stringify({ table: '7' }),
            success_url: `${shop.url}/shop/success?order=42`,
            cancel_url: `${shop.url}/shop/cart`,
            ...body,
          },
        });
        if (r.status !== 200) throw new Error(`create session: ${r.status} ${r.text}`);
        return r.body;
      },
      async webhooksDelivered() {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const { rows } = await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = $1 AND status IN ('pending', 'failed')`, [creds.merchantId]);
          if (rows[0]!.n === 0) return;
          if (Date.now() > deadline) throw new Error(`${rows[0]!.n} webhook deliveries still pending after 30 s`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
      async close() {
        for (const c of cleanup.reverse()) await c().catch(() => {});
      },
    };
  } catch (err) {
    for (const c of cleanup.reverse()) await c().catch(() => {});
    throw err;
  }
}
