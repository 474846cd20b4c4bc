// Reference servers for bench/orders-api.ts, in one child process: a bare fastify JSON route (the
// HTTP ceiling) and, when BENCH_DB_URL is set, a fastify route running one `SELECT 1` through a pg
// pool (the ceiling of any route that touches the database on this machine).
import Fastify from 'fastify';
import pg from 'pg';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ status: 'ok', n: 1 }));
const dbUrl = process.env.BENCH_DB_URL;
const pool = dbUrl ? new pg.Pool({ connectionString: dbUrl, max: 20 }) : undefined;
if (pool) app.get('/one-query', async () => (await pool.query('SELECT 1 AS x')).rows[0]);
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address() as { port: number };
console.log(`listening on http://127.0.0.1:${addr.port}`);
process.on('SIGTERM', () => void app.close().then(() => pool?.end()).then(() => process.exit(0)));
