// A bare fastify JSON route: the ceiling any Tollgate route is compared against (same machine, same run).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ status: 'ok', n: 1 }));
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address() as { port: number };
console.log(`listening on http://127.0.0.1:${addr.port}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
