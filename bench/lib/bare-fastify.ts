// Reference servers for bench/orders-api.ts, in one child process: a bare fastify JSON route (the
// HTTP ceiling) and, when BENCH_DB_URL is set, a fastify route running one `SELECT 1` through a pg
// pool (the ceiling of any route that touches the database on this machine).
import Fastify from 'fastify';
import pg from 'pg';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ status: 'ok', n: 1 }));
// The shape of createOrder without Tollgate: a JSON body in, a 402 with a ~1 KB header and the same
// body size out (the HTTP ceiling of that exchange on this machine).
const terms = JSON.stringify({
  x402Version: 2,
  resource: { url: 'http://127.0.0.1:8080/api/v1/orders/ord_' + 'x'.repeat(22), description: 'Payment for order bench-000000-00000', mimeType: 'application/json' },
  accepts: [{ scheme: 'exact', network: 'eip155:31337', amount: '1000000', asset: '0x' + 'a'.repeat(40), payTo: '0x' + '1'.repeat(40), maxTimeoutSeconds: 3600, extra: { flow: 'DIRECT', tokenSymbol: 'USDC', decimals: 6 } }],
  extensions: { paymentTerms: { destinationChain: 'eip155:31337', expiresAt: 1800000000, paymentMethod: 'transfer', receiveType: 'DIRECT' } },
  order_id: 'ord_' + 'x'.repeat(22),
  flow: 'DIRECT',
  token_symbol: 'USDC',
});
app.post('/post-402', async (req, reply) => {
  const b = req.body as { amount_wei?: string };
  reply.status(402).header('payment-required', Buffer.from(terms.replace('1000000', b.amount_wei ?? '1')).toString('base64'));
  return JSON.parse(terms);
});
const dbUrl = process.env.BENCH_DB_URL;
const pool = dbUrl ? new pg.Pool({ connectionString: dbUrl, max: 20 }) : undefined;
if (pool) app.get('/one-query', async () => (await pool.query('SELECT 1 AS x')).rows[0]);
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address() as { port: number };
console.log(`listening on http://127.0.0.1:${addr.port}`);
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool?.end())
      .then(() => process.exit(0)),
);
