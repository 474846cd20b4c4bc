// `serve --role api` (or BENCH_ROLE=worker: the chain watcher and workers, no HTTP) without per-IP rate limits, for benchmarks whose single load generator would
// otherwise be throttled like one abusive client (the machine_payment class allows 600/min).
import { loadConfig } from '../../apps/server/src/config/load.ts';
import { openDatabase } from '../../apps/server/src/db/open.ts';
import { startTollgate } from '../../apps/server/src/main.ts';

const config = loadConfig(process.env);
const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
const role = process.env.BENCH_ROLE === 'worker' ? 'worker' : 'api';
const tg = await startTollgate(config, { role, db, http: { rateLimits: false } });
console.log(role === 'api' ? `listening on ${tg.url}` : 'worker started');
process.on(
  'SIGTERM',
  () =>
    void tg
      .close()
      .then(() => db.close())
      .then(() => process.exit(0)),
);
